/**
 * Signature failures per source, by minute over the last day, from the ingress's `rejected` channel: the last
 * hour against the day's hourly baseline, so a spike after a secret rotated unannounced stands out. In
 * memory, per process: the process that serves the ingress sees its own failures.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { channels, type RejectedMessage } from '../shared/diagnostics.js'

const MINUTE = 60_000
const DAY_MINUTES = 24 * 60
/** The rejections that mean "this sender's signature does not verify". */
const SIGNATURE_REASONS: ReadonlySet<string> = new Set(['bad_signature', 'stale'])

export interface SignatureFailures {
  source: string
  lastHour: number
  /** Failures per hour over the 23 hours before the last one. */
  dayBaselinePerHour: number
}

export class SignatureFailureTally {
  /** Per source: minute number → count, for the last day. */
  private readonly minutes = new Map<string, Map<number, number>>()
  private readonly listener = (message: unknown): void => {
    const m = message as RejectedMessage
    if (SIGNATURE_REASONS.has(m.reason)) this.note(m.source)
  }

  start (): this {
    subscribe(channels.rejected.name, this.listener)
    return this
  }

  stop (): void {
    unsubscribe(channels.rejected.name, this.listener)
  }

  note (source: string, now = Date.now()): void {
    const minute = Math.floor(now / MINUTE)
    let counts = this.minutes.get(source)
    if (counts === undefined) this.minutes.set(source, counts = new Map())
    counts.set(minute, (counts.get(minute) ?? 0) + 1)
    if (counts.size > DAY_MINUTES) for (const m of counts.keys()) if (m <= minute - DAY_MINUTES) counts.delete(m)
  }

  snapshot (now = Date.now()): SignatureFailures[] {
    const minute = Math.floor(now / MINUTE)
    const out: SignatureFailures[] = []
    for (const [source, counts] of this.minutes) {
      let lastHour = 0
      let before = 0
      for (const [m, n] of counts) {
        if (m > minute - 60) lastHour += n
        else if (m > minute - DAY_MINUTES) before += n
      }
      out.push({ source, lastHour, dayBaselinePerHour: Math.round((before / 23) * 100) / 100 })
    }
    return out.sort((a, b) => b.lastHour - a.lastHour)
  }
}

/**
 * Signature failures per source, by minute over the last day, from the ingress's `rejected` channel: the last
 * hour against the day's hourly baseline, so a spike after a secret rotated unannounced stands out. In
 * memory, per process: the process that serves the ingress sees its own failures.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { channels, type RejectedMessage } from '../shared/diagnostics.js'

const MINUTE = 60_000
const DAY_MINUTES = 24 * 60

/** Why a signature failed: wrong (it does not match), stale (outside the tolerance), malformed or missing header. */
export type SignatureFailureReason = 'bad_signature' | 'stale' | 'malformed' | 'missing'

/** The rejections that mean "this sender's signature does not verify", by reason; a malformed body or a 413 is none. */
export function signatureFailureReason (message: RejectedMessage): SignatureFailureReason | undefined {
  if (message.reason === 'bad_signature' || message.reason === 'stale') return message.reason
  if (message.code === 'ANVIL_ERR_SIGNATURE_MALFORMED') return 'malformed'
  if (message.code === 'ANVIL_ERR_SIGNATURE_MISSING') return 'missing'
  return undefined
}

export interface SignatureFailures {
  source: string
  lastHour: number
  /** The last hour's failures by reason (only the reasons seen). */
  lastHourByReason: Partial<Record<SignatureFailureReason, number>>
  /** Failures per hour over the 23 hours before the last one. */
  dayBaselinePerHour: number
}

export class SignatureFailureTally {
  /** Per source: minute number → count by reason, for the last day. */
  private readonly minutes = new Map<string, Map<number, Partial<Record<SignatureFailureReason, number>>>>()
  private readonly listener = (message: unknown): void => {
    const reason = signatureFailureReason(message as RejectedMessage)
    if (reason !== undefined) this.note((message as RejectedMessage).source, reason)
  }

  start (): this {
    subscribe(channels.rejected.name, this.listener)
    return this
  }

  stop (): void {
    unsubscribe(channels.rejected.name, this.listener)
  }

  note (source: string, reason: SignatureFailureReason = 'bad_signature', now = Date.now()): void {
    const minute = Math.floor(now / MINUTE)
    let counts = this.minutes.get(source)
    if (counts === undefined) this.minutes.set(source, counts = new Map())
    const byReason = counts.get(minute) ?? {}
    byReason[reason] = (byReason[reason] ?? 0) + 1
    counts.set(minute, byReason)
    if (counts.size > DAY_MINUTES) for (const m of counts.keys()) if (m <= minute - DAY_MINUTES) counts.delete(m)
  }

  snapshot (now = Date.now()): SignatureFailures[] {
    const minute = Math.floor(now / MINUTE)
    const out: SignatureFailures[] = []
    for (const [source, counts] of this.minutes) {
      let lastHour = 0
      let before = 0
      const lastHourByReason: SignatureFailures['lastHourByReason'] = {}
      for (const [m, byReason] of counts) {
        for (const [reason, n] of Object.entries(byReason) as Array<[SignatureFailureReason, number]>) {
          if (m > minute - 60) {
            lastHour += n
            lastHourByReason[reason] = (lastHourByReason[reason] ?? 0) + n
          } else if (m > minute - DAY_MINUTES) before += n
        }
      }
      out.push({ source, lastHour, lastHourByReason, dayBaselinePerHour: Math.round((before / 23) * 100) / 100 })
    }
    return out.sort((a, b) => b.lastHour - a.lastHour)
  }
}

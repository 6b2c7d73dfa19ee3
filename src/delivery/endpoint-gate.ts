/**
 * A bulkhead per endpoint, in this process: at most `maxInFlight` deliveries to one endpoint at once, so an
 * endpoint that hangs holds a bounded share of the worker's slots before its circuit opens (which takes
 * whole timeouts). The slots are earned: an endpoint starts with one in flight, doubles it with each delivery
 * done within `slowAfterMs`, and drops back to one after a slower one, so an endpoint that hangs or trickles
 * holds one slot, not the cap, while the others go on. A job over its endpoint's share waits here while the
 * endpoint is answering quickly (100 ms at most before its first quick answer); once the endpoint is known
 * slow (its oldest delivery out longer than that or `slowAfterMs`, or its last one took longer), the job is
 * told to come back later, paced, holding no slot.
 *
 * Adaptive (`soloMaxInFlight` set): the cap binds only while it can protect something, i.e. within `recentMs`
 * of a second endpoint entering (or being in flight) or of a delivery that took longer than `slowAfterMs`.
 * Otherwise the one busy endpoint may use `soloMaxInFlight` (the worker's every slot): halving a lone fast
 * endpoint's parallelism would cost throughput and shield no one.
 */
export interface GateSettings {
  maxInFlight: number
  slowAfterMs: number
  timeoutMs: number
  /** The cap while it does not bind (adaptive); absent: `maxInFlight` always binds. */
  soloMaxInFlight?: number
  /** How long a second endpoint or a slow delivery keeps the cap binding; required with `soloMaxInFlight`. */
  recentMs?: number
}

/** `release(false)`: the job left without a POST (put back as delayed), so its time says nothing of the endpoint. */
export type GateEntry = { release: (delivered?: boolean) => void } | { retryAt: number }

/** One timer per endpoint, not per waiting job: it wakes every waiter to look again once the oldest may be slow. */
interface EndpointLoad { starts: number[], waiters: Array<() => void>, timer: NodeJS.Timeout | undefined }

/** Delayed jobs of one slow endpoint come back spread over this much. */
const SPREAD_MS = 1000
/** How long a job of an endpoint that never answered quickly may wait here for a slot of it. */
const UNPROVEN_PATIENCE_MS = 100
/** How far ahead, in timeouts, a slow endpoint's job may be put back. */
const MAX_PUT_BACK_TIMEOUTS = 3
/** Endpoints whose earned share is remembered; past this many the memory starts over (every share back to one). */
const MAX_REMEMBERED = 10_000

export interface EndpointGate {
  /** Synchronous when the endpoint is under its cap (the common case), a promise when the job has to wait. */
  enter (endpointId: string): GateEntry | Promise<GateEntry>
}

export function createEndpointGate (settings: GateSettings): EndpointGate {
  const loads = new Map<string, EndpointLoad>()
  const adaptive = settings.soloMaxInFlight !== undefined
  const soloMax = settings.soloMaxInFlight ?? settings.maxInFlight
  const recentMs = settings.recentMs ?? 0
  // The cap binds before this time; a fixed cap always binds. Plain numbers and one string: nothing allocated per delivery.
  let bindsUntil = adaptive ? 0 : Infinity
  let lastEndpoint: string | undefined
  let lastEnteredAt = -Infinity
  /** Deliveries each endpoint may have in flight while the cap binds, earned by quick answers; 0: known slow (one). */
  const earned = new Map<string, number>()
  /** A slow endpoint's pace (how long its last delivery took) and when the next job put back should return. */
  const paced = new Map<string, { paceMs: number, nextAt: number }>()

  function release (endpointId: string, load: EndpointLoad, start: number, delivered: boolean): void {
    if (delivered) learn(endpointId, start)
    const index = load.starts.indexOf(start)
    if (index !== -1) load.starts.splice(index, 1)
    // Every waiter looks again: the share may have grown by more than the one slot freed.
    if (load.waiters.length > 0) wakeAll(load)
    else if (load.starts.length === 0) loads.delete(endpointId)
  }

  /** A delivery's time earns its endpoint a share (a quick answer) or takes it away (a slow one). */
  function learn (endpointId: string, start: number): void {
    const now = Date.now()
    // A delivery that sat this long may be the start of a hang: keep the cap for a while, even for a lone endpoint.
    const slow = now - start > settings.slowAfterMs
    if (adaptive && slow) bindsUntil = now + recentMs
    if (earned.size >= MAX_REMEMBERED) { earned.clear(); paced.clear() }
    earned.set(endpointId, slow ? 0 : Math.min(settings.maxInFlight, 2 * Math.max(1, earned.get(endpointId) ?? 1)))
    if (slow) paced.set(endpointId, { paceMs: now - start, nextAt: paced.get(endpointId)?.nextAt ?? 0 })
    else paced.delete(endpointId)
  }

  function wakeAll (load: EndpointLoad): void {
    clearTimeout(load.timer)
    load.timer = undefined
    for (const wake of load.waiters.splice(0)) wake()
  }

  /** Admits at once when under the cap; otherwise undefined and the oldest delivery's start. */
  function admit (endpointId: string, now: number): GateEntry | undefined {
    let load = loads.get(endpointId)
    if (adaptive) {
      // Another endpoint in flight now, or entered within the window: more than one endpoint is active.
      const othersInFlight = loads.size > (load === undefined ? 0 : 1)
      if (othersInFlight || (endpointId !== lastEndpoint && now - lastEnteredAt < recentMs)) bindsUntil = now + recentMs
      lastEndpoint = endpointId
      lastEnteredAt = now
    }
    if (load === undefined) {
      load = { starts: [], waiters: [], timer: undefined }
      loads.set(endpointId, load)
    }
    if (load.starts.length >= (now < bindsUntil ? Math.max(1, earned.get(endpointId) ?? 1) : soloMax)) return undefined
    // A start time shared by two deliveries is still one entry each: indexOf removes one.
    load.starts.push(now)
    const current = load
    let released = false
    return { release: (delivered = true) => { if (!released) { released = true; release(endpointId, current, now, delivered) } } }
  }

  /**
   * When a job of a slow endpoint comes back: one delivery's time (its last one, or how long it has sat on its
   * oldest, at most a timeout) after the one put back before it, so its backlog returns at about the pace it
   * takes jobs instead of all of them cycling through the worker's slots; at most a few timeouts ahead.
   */
  function putBack (endpointId: string, now: number, age: number): number {
    const memory = paced.get(endpointId) ?? { paceMs: 0, nextAt: 0 }
    const pace = Math.min(settings.timeoutMs, Math.max(memory.paceMs, age, settings.slowAfterMs))
    const at = Math.min(Math.max(now + pace, memory.nextAt), now + MAX_PUT_BACK_TIMEOUTS * settings.timeoutMs)
    paced.set(endpointId, { paceMs: memory.paceMs, nextAt: at + pace })
    return at + Math.floor(Math.random() * Math.min(SPREAD_MS, pace))
  }

  async function enterSlowly (endpointId: string): Promise<GateEntry> {
    for (;;) {
      const now = Date.now()
      const admitted = admit(endpointId, now)
      if (admitted !== undefined) return admitted
      const load = loads.get(endpointId) as EndpointLoad
      const oldest = Math.min(...load.starts)
      const age = now - oldest
      const share = earned.get(endpointId)
      // Waiting holds a slot: only briefly for an endpoint that never answered quickly (it may be hanging).
      const patience = share === undefined ? Math.min(UNPROVEN_PATIENCE_MS, settings.slowAfterMs) : settings.slowAfterMs
      if (age >= patience || share === 0) return { retryAt: putBack(endpointId, now, age) }
      await new Promise<void>((resolve) => {
        load.waiters.push(resolve)
        // The oldest only gets younger as deliveries end, so the first waiter's timer is never late.
        load.timer ??= setTimeout(wakeAll, patience - age, load)
      })
    }
  }

  return {
    enter (endpointId) {
      return admit(endpointId, Date.now()) ?? enterSlowly(endpointId)
    }
  }
}

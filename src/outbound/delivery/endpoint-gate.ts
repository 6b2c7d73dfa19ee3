/**
 * A bulkhead per endpoint, in this process: at most `maxInFlight` deliveries to one endpoint at once, so an
 * endpoint that hangs holds a bounded share of the worker's slots before its circuit opens (which takes
 * whole timeouts). A job over the cap waits here while the endpoint is answering quickly; once its oldest
 * delivery has been out longer than `slowAfterMs`, the job is told to come back later (the slower, the later).
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

export type GateEntry = { release: () => void } | { retryAt: number }

/** One timer per endpoint, not per waiting job: it wakes every waiter to look again once the oldest may be slow. */
interface EndpointLoad { starts: number[], waiters: Array<() => void>, timer: NodeJS.Timeout | undefined }

/** Delayed jobs of one slow endpoint come back spread over this much. */
const SPREAD_MS = 1000

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

  function release (endpointId: string, load: EndpointLoad, start: number): void {
    if (adaptive) {
      // A delivery that sat this long may be the start of a hang: keep the cap for a while, even for a lone endpoint.
      const now = Date.now()
      if (now - start > settings.slowAfterMs) bindsUntil = now + recentMs
    }
    const index = load.starts.indexOf(start)
    if (index !== -1) load.starts.splice(index, 1)
    const next = load.waiters.shift()
    if (next !== undefined) {
      if (load.waiters.length === 0 && load.timer !== undefined) {
        clearTimeout(load.timer)
        load.timer = undefined
      }
      next()
    } else if (load.starts.length === 0) loads.delete(endpointId)
  }

  function wakeAll (load: EndpointLoad): void {
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
    if (load.starts.length >= (now < bindsUntil ? settings.maxInFlight : soloMax)) return undefined
    // A start time shared by two deliveries is still one entry each: indexOf removes one.
    load.starts.push(now)
    const current = load
    let released = false
    return { release: () => { if (!released) { released = true; release(endpointId, current, now) } } }
  }

  async function enterSlowly (endpointId: string): Promise<GateEntry> {
    for (;;) {
      const now = Date.now()
      const admitted = admit(endpointId, now)
      if (admitted !== undefined) return admitted
      const load = loads.get(endpointId) as EndpointLoad
      const oldest = Math.min(...load.starts)
      const age = now - oldest
      // Back after about as long as the endpoint has been sitting on its oldest delivery, at most a timeout.
      if (age >= settings.slowAfterMs) return { retryAt: now + Math.min(settings.timeoutMs, age) + Math.floor(Math.random() * SPREAD_MS) }
      await new Promise<void>((resolve) => {
        load.waiters.push(resolve)
        // The oldest only gets younger as deliveries end, so the first waiter's timer is never late.
        load.timer ??= setTimeout(wakeAll, settings.slowAfterMs - age, load)
      })
    }
  }

  return {
    enter (endpointId) {
      return admit(endpointId, Date.now()) ?? enterSlowly(endpointId)
    }
  }
}

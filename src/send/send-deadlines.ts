/**
 * The total timeout of every POST in flight, kept by one coarse timer instead of a timer and an
 * AbortController per request: each tick expires the exchanges past their deadline, so a POST is cut at
 * most one tick after it. The timer runs only while something is in flight, and never holds the process.
 */
export interface Deadline {
  readonly deadline: number
  expire (): void
}

/** How late past its deadline a POST may be cut. */
export const DEADLINE_TICK_MS = 50

const inFlight = new Set<Deadline>()
let ticker: NodeJS.Timeout | undefined

function tick (): void {
  const now = performance.now()
  for (const entry of inFlight) {
    if (entry.deadline <= now) {
      inFlight.delete(entry)
      entry.expire()
    }
  }
  if (inFlight.size === 0 && ticker !== undefined) {
    clearInterval(ticker)
    ticker = undefined
  }
}

export function trackDeadline (entry: Deadline): void {
  inFlight.add(entry)
  if (ticker === undefined) {
    ticker = setInterval(tick, DEADLINE_TICK_MS)
    ticker.unref()
  }
}

export function untrackDeadline (entry: Deadline): void {
  inFlight.delete(entry)
}

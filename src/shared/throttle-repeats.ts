/** While Redis is away every connection logs every reconnect attempt; one line per this window is enough. */
export const REPEAT_WINDOW_MS = 10_000
/**
 * Past this many remembered lines, the ones older than the window are forgotten (error texts can vary),
 * and with them a `repeated` count not yet written: a bound on memory is worth more than that count.
 */
const PRUNE_ABOVE = 100
/** A hard bound: when that many lines are all within the window, the oldest are forgotten first. */
const REMEMBER_AT_MOST = 1000

interface LevelLogger { (obj: object, msg?: string): void }
export interface WarnLogger { debug?: LevelLogger, info: LevelLogger, warn: LevelLogger, error: LevelLogger }

/**
 * A logger wrapper that writes a repeated warning (same message, same error) once per window,
 * with `repeated: n` saying how many were left out since. Lines about one job (a `jobId`) always pass:
 * each is one attempt of one job, and many jobs failing alike must still each leave a line.
 */
export function throttleRepeats (log: WarnLogger, windowMs = REPEAT_WINDOW_MS): WarnLogger {
  const seen = new Map<string, { at: number, repeated: number }>()
  const throttled = (level: 'warn' | 'error'): LevelLogger => (obj, msg) => {
    if ((obj as { jobId?: unknown }).jobId !== undefined) return log[level](obj, msg)
    const key = `${level}|${msg ?? ''}|${String((obj as { err?: unknown }).err)}`
    const now = Date.now()
    const last = seen.get(key)
    if (last !== undefined && now - last.at < windowMs) {
      last.repeated++
      return
    }
    if (seen.size > PRUNE_ABOVE) {
      for (const [old, entry] of seen) if (now - entry.at >= windowMs) seen.delete(old)
      // A Map iterates in insertion order, and a line is re-inserted when its window ends: first is oldest.
      for (const old of seen.keys()) {
        if (seen.size < REMEMBER_AT_MOST) break
        seen.delete(old)
      }
    }
    seen.delete(key)
    seen.set(key, { at: now, repeated: 0 })
    log[level](last === undefined || last.repeated === 0 ? obj : { ...obj, repeated: last.repeated }, msg)
  }
  return {
    debug: (obj, msg) => log.debug?.(obj, msg),
    info: (obj, msg) => log.info(obj, msg),
    warn: throttled('warn'),
    error: throttled('error')
  }
}

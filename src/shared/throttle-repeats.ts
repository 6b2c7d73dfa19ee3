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
export interface WarnLogger {
  debug?: LevelLogger
  info: LevelLogger
  warn: LevelLogger
  error: LevelLogger
  isLevelEnabled? (level: string): boolean
}

interface Seen {
  at: number
  repeated: number
  /** The latest line left out, written with the count when the window ends. */
  last?: object
  summary?: NodeJS.Timeout
}

/**
 * A logger wrapper that writes a repeated warning (same message, same `err` and `reason`) once per window;
 * when the window ends with lines left out, a summary line (the latest of them) says how many with
 * `repeated: n`. Lines about one job (a `jobId`) always pass: each is one attempt of one job, and many jobs
 * failing alike must still each leave a line.
 */
export function throttleRepeats (log: WarnLogger, windowMs = REPEAT_WINDOW_MS): WarnLogger {
  const seen = new Map<string, Seen>()
  const forget = (key: string): void => {
    clearTimeout(seen.get(key)?.summary)
    seen.delete(key)
  }
  const throttled = (level: 'warn' | 'error'): LevelLogger => (obj, msg) => {
    const fields = obj as { jobId?: unknown, err?: unknown, reason?: unknown }
    if (fields.jobId !== undefined) return log[level](obj, msg)
    const key = `${level}|${msg ?? ''}|${String(fields.err)}|${String(fields.reason)}`
    const now = Date.now()
    const entry = seen.get(key)
    if (entry !== undefined && now - entry.at < windowMs) {
      entry.repeated++
      entry.last = obj
      entry.summary ??= summarize(entry, level, msg, entry.at + windowMs - now)
      return
    }
    if (seen.size > PRUNE_ABOVE) {
      for (const [old, stale] of seen) if (now - stale.at >= windowMs) forget(old)
      // A Map iterates in insertion order, and a line is re-inserted when its window ends: first is oldest.
      for (const old of seen.keys()) {
        if (seen.size < REMEMBER_AT_MOST) break
        forget(old)
      }
    }
    forget(key)
    seen.set(key, { at: now, repeated: 0 })
    log[level](entry === undefined || entry.repeated === 0 ? obj : { ...obj, repeated: entry.repeated }, msg)
  }
  /** At the window's end, the count of what was left out, so a burst that stops is still counted. */
  function summarize (entry: Seen, level: 'warn' | 'error', msg: string | undefined, inMs: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      entry.summary = undefined
      if (entry.repeated === 0) return
      log[level]({ ...entry.last, repeated: entry.repeated }, msg)
      entry.at = Date.now()
      entry.repeated = 0
    }, inMs)
    // A pending summary never holds a process open that is otherwise done.
    timer.unref()
    return timer
  }
  return {
    debug: (obj, msg) => log.debug?.(obj, msg),
    info: (obj, msg) => log.info(obj, msg),
    warn: throttled('warn'),
    error: throttled('error'),
    ...(log.isLevelEnabled === undefined ? {} : { isLevelEnabled: (level: string) => log.isLevelEnabled?.(level) === true })
  }
}

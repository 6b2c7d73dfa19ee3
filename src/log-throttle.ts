/** While Redis is away every connection logs every reconnect attempt; one line per this window is enough. */
export const REPEAT_WINDOW_MS = 10_000

interface LevelLogger { (obj: object, msg?: string): void }
export interface WarnLogger { info: LevelLogger, warn: LevelLogger, error: LevelLogger }

/**
 * A logger wrapper that writes a repeated warning (same message, same error) once per window,
 * with `repeated: n` saying how many were left out since. Other lines pass through.
 */
export function throttleRepeats (log: WarnLogger, windowMs = REPEAT_WINDOW_MS): WarnLogger {
  const seen = new Map<string, { at: number, repeated: number }>()
  const throttled = (level: 'warn' | 'error'): LevelLogger => (obj, msg) => {
    const key = `${level}|${msg ?? ''}|${String((obj as { err?: unknown }).err)}`
    const now = Date.now()
    const last = seen.get(key)
    if (last !== undefined && now - last.at < windowMs) {
      last.repeated++
      return
    }
    seen.set(key, { at: now, repeated: 0 })
    log[level](last === undefined || last.repeated === 0 ? obj : { ...obj, repeated: last.repeated }, msg)
  }
  return { info: (obj, msg) => log.info(obj, msg), warn: throttled('warn'), error: throttled('error') }
}

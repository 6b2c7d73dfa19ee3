/** JSON from bytes: parsed at most once, and only when someone asks. */

/** The bytes as JSON, or undefined when they are not JSON. */
export function parseJson (payload: Buffer): unknown {
  try { return JSON.parse(payload.toString('utf8')) } catch { return undefined }
}

/** Parses a buffer as JSON at most once; undefined when it is not JSON. */
export function lazyJson (payload: Buffer): () => unknown {
  let parsed: { value: unknown } | undefined
  return () => {
    parsed ??= { value: parseJson(payload) }
    return parsed.value
  }
}

/** Parses a buffer as JSON at most once, and throws (every time) when it is not JSON. */
export function strictLazyJson (payload: Buffer): () => unknown {
  let parsed: { value: unknown } | undefined
  return () => {
    parsed ??= { value: JSON.parse(payload.toString('utf8')) }
    return parsed.value
  }
}

/**
 * How deep a JSON view may nest: a payload deeper than this is kept and shown as its bytes only, since every
 * recursive reader (JSON.stringify of an answer, a diff, a browser's renderer) could overflow its stack on it.
 */
export const MAX_JSON_VIEW_DEPTH = 100

/** True when the JSON text nests arrays and objects deeper than `max`; a scan, so any depth is safe to ask about. */
export function nestsDeeperThan (text: string, max = MAX_JSON_VIEW_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return false
}

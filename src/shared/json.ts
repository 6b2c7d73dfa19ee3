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

/** NUL, or a UTF-16 surrogate (a lone one is JSON's `\udXXX`, which jsonb refuses). */
const JSONB_UNSAFE = /[\0\ud800-\udfff]/

/** A string jsonb takes: without NUL, a lone surrogate replaced (U+FFFD) by the round trip through UTF-8. */
function jsonbText (value: string): string {
  return JSONB_UNSAFE.test(value) ? Buffer.from(value.replaceAll('\0', ''), 'utf8').toString('utf8') : value
}

/** The headers as JSON that jsonb takes, whatever bytes a sender put in them. */
export function headersJson (headers: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(headers).map(([name, value]) => [jsonbText(name), jsonbText(String(value))])))
}

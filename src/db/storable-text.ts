/**
 * Text from outside (a receiver's answer, an error's message, a caller's filter) as PostgreSQL's text takes
 * it: NUL, invalid UTF-8 and lone surrogates each become U+FFFD, so nothing from outside can fail a write.
 */

/** NUL, or a UTF-16 surrogate without its pair. */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

export function storableText (text: string | Buffer): string {
  // Decoding as UTF-8 already replaces each invalid sequence with U+FFFD.
  const decoded = typeof text === 'string' ? text : text.toString('utf8')
  return decoded.replace(UNSTORABLE, '\uFFFD')
}

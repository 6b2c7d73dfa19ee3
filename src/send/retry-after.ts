/** `Retry-After` as milliseconds from now: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter (value: string | string[] | undefined, now = Date.now()): number | undefined {
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000
  // Only an HTTP date (IMF-fixdate): Date.parse would also read '-5' or '2030' as a time.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined
  const at = Date.parse(text)
  if (Number.isNaN(at)) return undefined
  return Math.max(0, at - now)
}

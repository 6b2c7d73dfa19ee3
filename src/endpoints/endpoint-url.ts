/** What an endpoint URL may be: checked when it is saved and again before each delivery. */

/** Longer URLs are refused: they are no receiver's, and they bloat every job and log line. */
export const MAX_ENDPOINT_URL_LENGTH = 2048

/** The problem with an endpoint URL as one line, or undefined. The URL itself is never quoted (it may hold a token). */
export function endpointUrlProblem (url: unknown, options: { httpsOnly?: boolean } = {}): string | undefined {
  if (typeof url !== 'string' || url === '') return 'must be a URL'
  if (url.length > MAX_ENDPOINT_URL_LENGTH) return `must be at most ${MAX_ENDPOINT_URL_LENGTH} characters`
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'must be an absolute http(s) URL'
  }
  if (options.httpsOnly === true && parsed.protocol !== 'https:') return 'must be https'
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must be http or https'
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry credentials (user:password@)'
  if (parsed.hostname === '') return 'must name a host'
  return undefined
}

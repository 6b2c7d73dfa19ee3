/** An endpoint URL is at most this many bytes. */
export const MAX_ENDPOINT_URL_BYTES = 2048

/**
 * The problem with an endpoint URL as one line, or undefined. Where it resolves to is checked when the
 * delivery connects (after DNS), not here: a name can change what it points at.
 */
export function endpointUrlProblem (url: string, httpsOnly = false): string | undefined {
  if (Buffer.byteLength(url, 'utf8') > MAX_ENDPOINT_URL_BYTES) return `is longer than ${MAX_ENDPOINT_URL_BYTES} bytes`
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'is not a URL'
  }
  if (httpsOnly && parsed.protocol !== 'https:') return `must be https (https only is set), got ${parsed.protocol}//`
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return `must be http or https, got ${parsed.protocol}//`
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry credentials'
  if (parsed.hostname === '') return 'has no host'
  return undefined
}

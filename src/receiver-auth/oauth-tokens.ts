/**
 * OAuth 2.0 client-credentials tokens for endpoints (RFC 6749 §4.4): fetched through the SSRF-guarded dispatcher
 * (the token URL's addresses checked after DNS, as a delivery's are), under a deadline, and kept per endpoint
 * until shortly before they expire. Concurrent deliveries to one endpoint share one fetch. A token is never
 * logged, stored or put in job data: it lives in this process's memory only.
 */
import { request, type Dispatcher } from 'undici'
import { deliveryErrorClass, type DeliveryErrorClass } from '../send/delivery-error-class.js'
import type { ClientCredentials } from './oauth-client.js'

/** A token fetch that failed; `errorClass` is the delivery log's (`oauth` when the server refused or answered no token). */
export class TokenFailure extends Error {
  constructor (message: string, readonly errorClass: DeliveryErrorClass) {
    super(message)
    this.name = 'TokenFailure'
  }
}

export interface OAuthTokens {
  /** A live token for the endpoint: the one kept, or a new one fetched. Throws TokenFailure. */
  token (endpointId: string, credentials: ClientCredentials): Promise<string>
  /** Drops a token the receiver refused (401), unless another has replaced it already. */
  forget (endpointId: string, token: string): void
}

/** How long a token without `expires_in` is kept. */
export const DEFAULT_TOKEN_LIFETIME_MS = 5 * 60_000
/** A token is fetched again this long before it expires (or in the last tenth of a shorter life). */
export const TOKEN_REFRESH_MARGIN_MS = 60_000
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024
const MAX_KEPT = 10_000
/** An RFC 6749 `error` code may be quoted (never the body, which might echo what was sent). */
const ERROR_CODE = /^[\w.-]{1,64}$/

interface Kept { version: string, token: string, until: number }

export function createOAuthTokens (options: { dispatcher: Dispatcher, timeoutMs: number }): OAuthTokens {
  const kept = new Map<string, Kept>()
  const fetching = new Map<string, Promise<Kept>>()

  async function fetchToken (credentials: ClientCredentials): Promise<Kept> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' })
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': 'anvil-webhooks' }
    if (credentials.authStyle === 'basic') {
      // RFC 6749 §2.3.1: each form-encoded, then joined and base64'd.
      const pair = `${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`
    } else {
      form.set('client_id', credentials.clientId)
      form.set('client_secret', credentials.clientSecret)
    }
    if (credentials.scope !== null) form.set('scope', credentials.scope)
    if (credentials.audience !== null) form.set('audience', credentials.audience)
    const started = Date.now()
    const deadline = AbortSignal.timeout(options.timeoutMs)
    let status: number
    let text: string
    try {
      const answer = await request(credentials.tokenUrl, {
        method: 'POST', dispatcher: options.dispatcher, headers, body: form.toString(), signal: deadline, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs
      })
      status = answer.statusCode
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > MAX_TOKEN_ANSWER_BYTES) {
          answer.body.destroy()
          throw new TokenFailure(`the token URL's answer is over ${MAX_TOKEN_ANSWER_BYTES} bytes`, 'oauth')
        }
        chunks.push(chunk)
      }
      text = Buffer.concat(chunks).toString('utf8')
    } catch (err) {
      if (err instanceof TokenFailure) throw err
      const timedOut = deadline.aborted
      throw new TokenFailure(timedOut ? `the token URL gave no token within ${options.timeoutMs} ms` : `the token URL: ${(err as Error).message}`, deliveryErrorClass(err, timedOut))
    }
    let answer: { access_token?: unknown, token_type?: unknown, expires_in?: unknown, error?: unknown } = {}
    try {
      answer = JSON.parse(text) as typeof answer
    } catch {}
    if (status < 200 || status >= 300) {
      const code = typeof answer.error === 'string' && ERROR_CODE.test(answer.error) ? ` (${answer.error})` : ''
      throw new TokenFailure(`the token URL answered HTTP ${status}${code}`, 'oauth')
    }
    const token = answer.access_token
    if (typeof token !== 'string' || !/^[\x21-\x7e]{1,8192}$/.test(token)) throw new TokenFailure('the token URL answered no access_token', 'oauth')
    if (answer.token_type !== undefined && String(answer.token_type).toLowerCase() !== 'bearer') throw new TokenFailure('the token URL answered a token that is not a bearer token', 'oauth')
    const lifeMs = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in * 1000 : DEFAULT_TOKEN_LIFETIME_MS
    return { version: credentials.version, token, until: started + lifeMs - Math.min(TOKEN_REFRESH_MARGIN_MS, lifeMs / 10) }
  }

  return {
    async token (endpointId, credentials) {
      const held = kept.get(endpointId)
      if (held !== undefined && held.version === credentials.version && held.until > Date.now()) return held.token
      const key = `${endpointId} ${credentials.version}`
      let fetched = fetching.get(key)
      if (fetched === undefined) {
        fetched = fetchToken(credentials)
        fetching.set(key, fetched)
        fetched.then((fresh) => {
          if (kept.size >= MAX_KEPT) kept.clear()
          kept.set(endpointId, fresh)
        }, () => {}).finally(() => fetching.delete(key)).catch(() => {})
      }
      return (await fetched).token
    },
    forget (endpointId, token) {
      if (kept.get(endpointId)?.token === token) kept.delete(endpointId)
    }
  }
}

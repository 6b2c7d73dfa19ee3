/**
 * `signRequest(provider, …)`: a request signed exactly as each provider signs it, for tests and `anvil send`.
 * One signer per preset, the counterpart of its verifier in src/providers/; test/testing/sign.test.ts checks
 * each against the provider's own SDK where one exists.
 */
import { createHash, createHmac, createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto'
import { errors } from '../shared/errors.js'
import { isProviderName, type ProviderName } from '../providers/presets.js'
import { signAnvil } from '../providers/anvil.js'
import { standardKey } from '../providers/standard-webhooks.js'

export interface SignRequestOptions {
  /** The body: a string or bytes as sent, or an object sent as JSON (Twilio: as form fields). */
  body: string | Buffer | object
  /** The signing secret; for Discord and SendGrid the private key (a KeyObject or PKCS#8 PEM, see `generateKeyPair`). */
  secret: string | KeyObject
  /** Seconds since the epoch; default now. */
  timestamp?: number
  /** The URL as configured at the provider: required for Twilio and Square, which sign it. */
  url?: string
  /** The delivery id, for providers that send one in a header (GitHub, Shopify, Linear, GitLab, Standard Webhooks, Twilio); default random. */
  eventId?: string
  /** The event type, for providers that send it in a header (GitHub, Shopify, Linear, GitLab). */
  eventType?: string
}

export interface SignedRequest {
  /** Every header the provider sends that Anvil reads, `content-type` included. */
  headers: Record<string, string>
  /** The body to send (Linear's carries the signed timestamp). */
  body: string
  /** The signed URL, where it differs from the one given (Twilio's JSON bodies add `bodySHA256`). */
  url?: string
}

interface Context {
  body: string
  secret: string | KeyObject
  timestamp: number
  /** The caller chose the timestamp (Linear then overwrites the body's). */
  timestampGiven: boolean
  url?: string
  eventId: string
  eventType?: string
  contentType: string
}

const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'

const hex = (secret: string | Buffer, ...parts: string[]): string => digest('hex', secret, parts)
const base64 = (secret: string | Buffer, ...parts: string[]): string => digest('base64', secret, parts)
function digest (encoding: 'hex' | 'base64', secret: string | Buffer, parts: string[], algorithm = 'sha256'): string {
  const mac = createHmac(algorithm, secret)
  for (const part of parts) mac.update(part)
  return mac.digest(encoding)
}

function textSecret (context: Context, provider: string): string {
  if (typeof context.secret !== 'string') throw new errors.INVALID_OPTIONS(`signRequest: the ${provider} secret is a string`)
  return context.secret
}

function privateKey (context: Context, provider: string, type: 'ed25519' | 'ec'): KeyObject {
  let key: KeyObject
  try {
    key = typeof context.secret === 'string' ? createPrivateKey(context.secret) : context.secret
  } catch {
    throw new errors.INVALID_OPTIONS(`signRequest: the ${provider} secret is a private key (KeyObject or PEM; generateKeyPair('${provider}') makes one)`)
  }
  if (key.type !== 'private' || key.asymmetricKeyType !== type) {
    throw new errors.INVALID_OPTIONS(`signRequest: the ${provider} secret is an ${type} private key (generateKeyPair('${provider}') makes one)`)
  }
  return key
}

function requireUrl (context: Context, provider: string): string {
  if (context.url === undefined) throw new errors.INVALID_OPTIONS(`signRequest: ${provider} signs the URL: give url (the public URL configured at ${provider})`)
  return context.url
}

/** Optional headers, left out when their value is. */
function present (headers: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined)) as Record<string, string>
}

/** Twilio's signed string: the URL, then the form parameters sorted by name, each as name + value. */
function twilioParams (body: string): string {
  const form = new URLSearchParams(body)
  return [...new Set(form.keys())].sort().map((name) => [...new Set(form.getAll(name))].sort().map((value) => name + value).join('')).join('')
}

type Signer = (context: Context) => { headers: Record<string, string>, body?: string, url?: string }

const SIGNERS: Record<ProviderName, Signer> = {
  anvil: (c) => ({ headers: { 'x-signature': signAnvil(textSecret(c, 'anvil'), c.body) } }),
  stripe: (c) => ({ headers: { 'stripe-signature': `t=${c.timestamp},v1=${hex(textSecret(c, 'stripe'), `${c.timestamp}.`, c.body)}` } }),
  github: (c) => ({
    headers: present({
      'x-hub-signature-256': `sha256=${hex(textSecret(c, 'github'), c.body)}`,
      'x-github-event': c.eventType,
      'x-github-delivery': c.eventId,
      'user-agent': 'GitHub-Hookshot/anvil-testing'
    })
  }),
  shopify: (c) => ({
    headers: present({
      'x-shopify-hmac-sha256': base64(textSecret(c, 'shopify'), c.body),
      'x-shopify-topic': c.eventType,
      'x-shopify-event-id': c.eventId,
      'x-shopify-webhook-id': randomUUID(),
      'x-shopify-shop-domain': 'anvil-testing.myshopify.com',
      'x-shopify-api-version': '2025-01',
      'x-shopify-triggered-at': new Date(c.timestamp * 1000).toISOString()
    })
  }),
  slack: (c) => ({
    headers: { 'x-slack-request-timestamp': String(c.timestamp), 'x-slack-signature': `v0=${hex(textSecret(c, 'slack'), `v0:${c.timestamp}:`, c.body)}` }
  }),
  twilio: (c) => {
    const url = requireUrl(c, 'twilio')
    // JSON bodies are bound through the URL: Twilio adds their SHA-256 as `bodySHA256` and signs the URL alone.
    const signedUrl = c.contentType === JSON_TYPE
      ? `${url}${url.includes('?') ? '&' : '?'}bodySHA256=${createHash('sha256').update(c.body).digest('hex')}`
      : url
    const params = c.contentType === JSON_TYPE ? '' : twilioParams(c.body)
    return {
      headers: { 'x-twilio-signature': digest('base64', textSecret(c, 'twilio'), [signedUrl, params], 'sha1'), 'i-twilio-idempotency-token': c.eventId },
      url: signedUrl === url ? undefined : signedUrl
    }
  },
  'standard-webhooks': (c) => ({
    headers: {
      'webhook-id': c.eventId,
      'webhook-timestamp': String(c.timestamp),
      'webhook-signature': `v1,${base64(standardKey(textSecret(c, 'standard-webhooks')), `${c.eventId}.${c.timestamp}.`, c.body)}`
    }
  }),
  paddle: (c) => ({ headers: { 'paddle-signature': `ts=${c.timestamp};h1=${hex(textSecret(c, 'paddle'), `${c.timestamp}:`, c.body)}` } }),
  linear: (c) => {
    // Linear signs its timestamp inside the body (`webhookTimestamp`, ms): set it, unless the body has one and no timestamp was asked for.
    const body = withLinearTimestamp(c.body, c.timestamp, c.timestampGiven)
    return {
      headers: present({ 'linear-signature': hex(textSecret(c, 'linear'), body), 'linear-delivery': c.eventId, 'linear-event': c.eventType }),
      body
    }
  },
  square: (c) => ({ headers: { 'x-square-hmacsha256-signature': base64(textSecret(c, 'square'), requireUrl(c, 'square'), c.body) } }),
  zoom: (c) => ({
    headers: { 'x-zm-request-timestamp': String(c.timestamp), 'x-zm-signature': `v0=${hex(textSecret(c, 'zoom'), `v0:${c.timestamp}:`, c.body)}` }
  }),
  gitlab: (c) => ({
    headers: present({ 'x-gitlab-token': textSecret(c, 'gitlab'), 'x-gitlab-event': c.eventType, 'x-gitlab-event-uuid': c.eventId, 'idempotency-key': c.eventId })
  }),
  discord: (c) => ({
    headers: {
      'x-signature-timestamp': String(c.timestamp),
      'x-signature-ed25519': sign(null, Buffer.from(`${c.timestamp}${c.body}`), privateKey(c, 'discord', 'ed25519')).toString('hex')
    }
  }),
  sendgrid: (c) => ({
    headers: {
      'x-twilio-email-event-webhook-timestamp': String(c.timestamp),
      'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(`${c.timestamp}${c.body}`), privateKey(c, 'sendgrid', 'ec')).toString('base64')
    }
  })
}

/** Set on an explicit timestamp, or when the body has none; anything but a JSON object is left as is. */
function withLinearTimestamp (body: string, timestamp: number, given: boolean): string {
  let parsed: unknown
  try { parsed = JSON.parse(body) } catch { return body }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return body
  const object = parsed as Record<string, unknown>
  if (object.webhookTimestamp !== undefined && !given) return body
  return JSON.stringify({ ...object, webhookTimestamp: timestamp * 1000 })
}

function serialise (provider: ProviderName, body: SignRequestOptions['body']): { text: string, contentType: string } {
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    const text = body.toString()
    return { text, contentType: looksLikeJson(text) ? JSON_TYPE : FORM_TYPE }
  }
  if (body === null || typeof body !== 'object') throw new errors.INVALID_OPTIONS('signRequest: body is a string, a Buffer or an object')
  if (provider === 'twilio') {
    return { text: new URLSearchParams(body as Record<string, string>).toString(), contentType: FORM_TYPE }
  }
  return { text: JSON.stringify(body), contentType: JSON_TYPE }
}

function looksLikeJson (text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Signs `body` as `provider` does: the headers (content type included) and the body to send. */
export function signRequest (provider: ProviderName, options: SignRequestOptions): SignedRequest {
  if (!isProviderName(provider)) throw new errors.INVALID_OPTIONS(`signRequest: unknown provider ${JSON.stringify(provider)}`)
  const { text, contentType } = serialise(provider, options.body)
  const context: Context = {
    body: text,
    secret: options.secret,
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    timestampGiven: options.timestamp !== undefined,
    url: options.url,
    eventId: options.eventId ?? (provider === 'standard-webhooks' ? `msg_${randomUUID()}` : randomUUID()),
    eventType: options.eventType,
    contentType
  }
  const signed = SIGNERS[provider](context)
  const result: SignedRequest = { headers: { 'content-type': contentType, ...signed.headers }, body: signed.body ?? text }
  if (signed.url !== undefined) result.url = signed.url
  return result
}

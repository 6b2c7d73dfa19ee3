/**
 * `anvil send <url> --provider stripe (--event invoice.paid | --file body.json)`: signs a webhook as the provider
 * does (src/testing/sign-request.ts) and POSTs it, like `stripe trigger`; one JSON line per answer on stdout.
 * `--redeliver` sends each event a second time, re-signed with the same event id, as a provider's retry:
 * Anvil answers `replayed: true`. The secret comes from ANVIL_SEND_SECRET, `--secret-file` or `--secret`
 * (the environment keeps it out of shell history and `ps`).
 */
import { readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { closestName } from '../src/shared/closest-name.js'
import { errors } from '../src/shared/errors.js'
import { isProviderName, PROVIDER_NAMES, type ProviderName } from '../src/providers/presets.js'
import { fixture, fixtureNames, type FixtureName } from '../src/testing/fixture.js'
import { signRequest } from '../src/testing/sign-request.js'

export const SEND_SECRET_ENV = 'ANVIL_SEND_SECRET'
/** Each request's own limit: a server that never answers must not hold the command. */
export const SEND_TIMEOUT_MS = 10_000
const MAX_TIMES = 1000

export interface SendFlags {
  provider?: string
  secret?: string
  secretFile?: string
  event?: string
  file?: string
  type?: string
  publicUrl?: string
  times?: string
  redeliver?: boolean
}

interface Plan {
  url: string
  provider: ProviderName
  secret: string
  times: number
  redeliver: boolean
  publicUrl: string
  /** A fresh event (body and header type) per send. */
  next: () => { body: unknown, eventType?: string }
}

const invalid = (message: string): Error => new errors.INVALID_CONFIG(message)

function readText (path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw invalid(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
}

/** Checks the flags into a plan; every problem is one INVALID_CONFIG line. */
export function planSend (url: string, flags: SendFlags, env: Record<string, string | undefined>): Plan {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw invalid(`the URL must be http:// or https:// (got ${JSON.stringify(url)})`)
  const provider = flags.provider ?? ''
  if (!isProviderName(provider)) throw invalid(`--provider must be one of ${PROVIDER_NAMES.join(', ')} (got ${JSON.stringify(provider)})`)
  const secrets = [flags.secret, flags.secretFile === undefined ? undefined : readText(flags.secretFile, '--secret-file'), env[SEND_SECRET_ENV] || undefined]
  const secret = secrets.find((value) => value !== undefined)
  if (secret === undefined) throw invalid(`a secret is required: set ${SEND_SECRET_ENV} (or give --secret-file or --secret)`)
  if ((flags.event === undefined) === (flags.file === undefined)) throw invalid('give either --event <name> (a built-in sample) or --file <body>')
  const times = flags.times === undefined ? 1 : Number(flags.times)
  if (!Number.isInteger(times) || times < 1 || times > MAX_TIMES) throw invalid(`--times must be a whole number from 1 to ${MAX_TIMES} (got ${JSON.stringify(flags.times)})`)
  let next: Plan['next']
  if (flags.event !== undefined) {
    const name = flags.event
    const names = fixtureNames(provider)
    if (!names.includes(name)) {
      const meant = closestName(name, names)
      throw invalid(`--event: no ${provider} sample "${name}"; ${meant === undefined ? `there are ${names.join(', ')}` : `did you mean "${meant}"? (${names.length} samples)`}`)
    }
    next = () => {
      const sample = fixture(provider, name as FixtureName<typeof provider>)
      return { body: sample.body, eventType: flags.type ?? sample.eventType }
    }
  } else {
    const body = readText(flags.file as string, '--file')
    next = () => ({ body, eventType: flags.type })
  }
  return { url, provider, secret, times, redeliver: flags.redeliver === true, publicUrl: flags.publicUrl ?? url, next }
}

async function post (url: string, signed: { headers: Record<string, string>, body: string, url?: string }): Promise<{ status: number, answer: unknown }> {
  // A signed URL with a query of its own (Twilio's bodySHA256) is sent with that query.
  const target = signed.url === undefined ? url : url + new URL(signed.url).search
  let response: Response
  try {
    response = await fetch(target, { method: 'POST', headers: signed.headers, body: signed.body, redirect: 'manual', signal: AbortSignal.timeout(SEND_TIMEOUT_MS) })
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message
    throw new errors.INVALID_CONFIG(`cannot reach ${url}: ${cause}`)
  }
  const text = await response.text()
  let answer: unknown = text
  try { answer = text === '' ? undefined : JSON.parse(text) } catch {}
  return { status: response.status, answer }
}

/** Sends the plan; one JSON line per answer through `write`. Resolves true when every answer was a 2xx. */
export async function send (plan: Plan, write: (line: string) => void): Promise<boolean> {
  let allAccepted = true
  for (let i = 0; i < plan.times; i++) {
    const { body, eventType } = plan.next()
    // The delivery id is chosen here, so a redelivery can carry the same one (GitHub, Shopify, … send it in a header).
    const eventId = plan.provider === 'standard-webhooks' ? `msg_${randomUUID()}` : randomUUID()
    for (const delivery of plan.redeliver ? ['first', 'redelivery'] : ['first']) {
      const signed = signRequest(plan.provider, { body: body as string | object, secret: plan.secret, url: plan.publicUrl, eventId, eventType })
      const { status, answer } = await post(plan.url, signed)
      allAccepted &&= status >= 200 && status < 300
      write(JSON.stringify({ status, ...(plan.redeliver ? { delivery } : {}), answer }))
    }
  }
  return allAccepted
}

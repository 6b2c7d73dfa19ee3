import { randomBytes } from 'node:crypto'
import { signAnvil } from '../src/providers/anvil.js'
import { fixtureNames } from '../src/testing/fixture.js'
import type { ProviderName } from '../src/providers/presets.js'

/** The README's test event. */
export const QUICKSTART_BODY = '{"id":"evt_1","type":"test.ping"}'

/**
 * A test event with an id of its own, for `anvil dev` to print: the same id again within the dedupe window
 * is a duplicate (`replayed: true`, and the handler does not run), which a second `npm start` must not be.
 */
export function freshTestBody (): string {
  return JSON.stringify({ id: `evt_${randomBytes(6).toString('hex')}`, type: 'test.ping' })
}

/** The README quickstart: signs with openssl from $WEBHOOK_SECRET, so it works for any secret. */
export function opensslCurl (url: string, body = QUICKSTART_BODY): string {
  return `body='${body}'; ` +
    'sig=$(printf \'%s\' "$body" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -hex | sed \'s/^.* //\'); ' +
    `curl -i -X POST ${url} -H 'content-type: application/json' -H "x-signature: sha256=$sig" --data "$body"`
}

/** The same request with its signature already computed: pasteable as is. Holds the HMAC, never the secret. */
export function signedCurl (url: string, secret: string, body = QUICKSTART_BODY): string {
  return `curl -i -X POST ${url} -H 'content-type: application/json' ` +
    `-H 'x-signature: ${signAnvil(secret, body)}' --data '${body}'`
}

/** A URL a local curl can reach, for the address the server is bound to. */
export function localUrl (host: string, port: number, path: string): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  const hostPart = reachable.includes(':') ? `[${reachable}]` : reachable
  return `http://${hostPart}:${port}${path}`
}

/**
 * `npx anvil send` of the provider's first sample event to `url`; the secret is left to ANVIL_SEND_SECRET.
 * `npx`: in a clone or a project with the package installed, `anvil` is not on PATH, and npx finds it.
 */
export function sendLine (url: string, provider: ProviderName, publicUrl?: string): string {
  const signedUrl = publicUrl === undefined ? '' : ` --public-url ${publicUrl}`
  return `npx anvil send ${url} --provider ${provider} --event '${fixtureNames(provider)[0] ?? ''}'${signedUrl}`
}

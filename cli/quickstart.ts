import { signAnvil } from '../src/providers/anvil.js'
import { fixtureNames } from '../src/testing/fixture.js'
import type { ProviderName } from '../src/providers/presets.js'

/** The README's test event. */
export const QUICKSTART_BODY = '{"id":"evt_1","type":"test.ping"}'

/** The README quickstart: signs with openssl from $WEBHOOK_SECRET, so it works for any secret. */
export function opensslCurl (url: string): string {
  return `body='${QUICKSTART_BODY}'; ` +
    'sig=$(printf \'%s\' "$body" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -hex | sed \'s/^.* //\'); ' +
    `curl -i -X POST ${url} -H 'content-type: application/json' -H "x-signature: sha256=$sig" --data "$body"`
}

/** The same request with its signature already computed: pasteable as is. Holds the HMAC, never the secret. */
export function signedCurl (url: string, secret: string): string {
  return `curl -i -X POST ${url} -H 'content-type: application/json' ` +
    `-H 'x-signature: ${signAnvil(secret, QUICKSTART_BODY)}' --data '${QUICKSTART_BODY}'`
}

/** A URL a local curl can reach, for the address the server is bound to. */
export function localUrl (host: string, port: number, path: string): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  const hostPart = reachable.includes(':') ? `[${reachable}]` : reachable
  return `http://${hostPart}:${port}${path}`
}

/** `anvil send` of the provider's first sample event to `url`; the secret is left to ANVIL_SEND_SECRET. */
export function sendLine (url: string, provider: ProviderName, publicUrl?: string): string {
  const signedUrl = publicUrl === undefined ? '' : ` --public-url ${publicUrl}`
  return `anvil send ${url} --provider ${provider} --event '${fixtureNames(provider)[0] ?? ''}'${signedUrl}`
}

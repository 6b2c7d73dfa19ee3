/**
 * An endpoint's OAuth 2.0 client credentials (`oauth: { tokenUrl, clientId, clientSecret, scope, audience }`): the
 * delivery worker fetches a bearer token with them (src/receiver-auth/oauth-tokens.ts) and sends it as
 * `authorization`. The token URL is held to the endpoint URL's rules; the client secret is stored sealed and
 * never answered.
 */
import { Type, type Static } from '@sinclair/typebox'
import { errors } from '../shared/errors.js'
import { Nullable } from '../shared/schemas.js'
import { endpointUrlProblem, MAX_ENDPOINT_URL_LENGTH } from '../endpoints/endpoint-url.js'
import type { EncryptionKeys } from '../at-rest/encryption-keys.js'

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength })
const AuthStyle = () => Type.Union([Type.Literal('basic'), Type.Literal('body')])
const fields = {
  /** Where tokens are fetched (POST, form-encoded, `grant_type=client_credentials`); checked against the SSRF guard at each fetch. */
  tokenUrl: Text(MAX_ENDPOINT_URL_LENGTH),
  clientId: Text(500),
  /** @defaultValue none */
  scope: Type.Optional(Text(1000)),
  /** Sent as `audience` (Auth0 and others ask for it). @defaultValue none */
  audience: Type.Optional(Text(1000)),
  /** How the client authenticates: HTTP Basic (RFC 6749's default) or `client_id` and `client_secret` in the form. @defaultValue `'basic'` */
  authStyle: Type.Optional(AuthStyle())
}

export const OAuthInputSchema = Type.Object({
  ...fields,
  /** Stored encrypted, never answered. */
  clientSecret: Text(4096)
}, { additionalProperties: false })
export type OAuthInput = Static<typeof OAuthInputSchema>

/** The `oauth` column (migration 0026): the secret sealed. */
export const StoredOAuthSchema = Type.Object({
  tokenUrl: Type.String(),
  clientId: Type.String(),
  clientSecret: Type.String(),
  scope: Nullable(Type.String()),
  audience: Nullable(Type.String()),
  authStyle: AuthStyle()
})
export type StoredOAuth = Static<typeof StoredOAuthSchema>

/** What an endpoint answers of its `oauth`: everything but the secret. */
export const OAuthSummarySchema = Nullable(Type.Omit(StoredOAuthSchema, ['clientSecret']))
export type OAuthSummary = Static<typeof OAuthSummarySchema>

export function oauthSummary (stored: StoredOAuth | null): OAuthSummary {
  if (stored === null) return null
  return { tokenUrl: stored.tokenUrl, clientId: stored.clientId, scope: stored.scope, audience: stored.audience, authStyle: stored.authStyle }
}

/** `oauth` as stored, checked; the secret sealed. */
export function storedOAuth (input: OAuthInput, options: { httpsOnly: boolean }, keys: EncryptionKeys | undefined): StoredOAuth {
  const problem = endpointUrlProblem(input.tokenUrl, options)
  if (problem !== undefined) throw new errors.INVALID_ENDPOINT(`oauth.tokenUrl ${problem}`)
  if (keys === undefined) throw new errors.ENCRYPTION_KEY_REQUIRED('oauth.clientSecret')
  return {
    tokenUrl: input.tokenUrl,
    clientId: input.clientId,
    clientSecret: keys.seal(input.clientSecret),
    scope: input.scope ?? null,
    audience: input.audience ?? null,
    authStyle: input.authStyle ?? 'basic'
  }
}

/** What the delivery worker fetches tokens with: the secret opened; `version` changes whenever the stored `oauth` does. */
export type ClientCredentials = StoredOAuth & { version: string }

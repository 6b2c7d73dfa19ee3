/**
 * Portal tokens: `anvil_pt_<payload>.<mac>`, the payload base64url JSON `{ tenant, exp, iat, scopes, theme?, embed?, v: 1 }`
 * (times in milliseconds since the epoch), the MAC base64url HMAC-SHA256 over everything before the dot. No
 * JWT library: one algorithm, one key, nothing for a header to choose.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto'
import { Type, type Static } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Tenant } from '../endpoints/endpoint-schemas.js'
import { constantTimeEqual, hmac } from '../signing/crypto.js'
import { PortalThemeSchema, type PortalTheme } from './portal-theme.js'

export const PORTAL_TOKEN_PREFIX = 'anvil_pt_'
export const DEFAULT_PORTAL_TTL_SECONDS = 60 * 60
export const MAX_PORTAL_TTL_SECONDS = 7 * 24 * 60 * 60
/** Longer than any token Anvil mints (a 200-character tenant, both scopes, a theme at its limits): past it, not worth decoding. */
const MAX_TOKEN_LENGTH = 3072
const KEY_LABEL = 'anvil portal token v1'
const SHAPE = /^anvil_pt_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/

/** `read`: the tenant's endpoints, deliveries and event types; `write`: also create, change, rotate, test, retry. */
export const PortalScope = () => Type.Union([Type.Literal('read'), Type.Literal('write')])
export type PortalScopeName = Static<ReturnType<typeof PortalScope>>
export const PortalScopes = () => Type.Array(PortalScope(), { minItems: 1, maxItems: 2, uniqueItems: true })
export const DEFAULT_PORTAL_SCOPES: readonly PortalScopeName[] = ['read', 'write']

export const PortalClaimsSchema = Type.Object({
  tenant: Tenant(),
  /** Expiry, ms since the epoch. */
  exp: Type.Integer({ minimum: 0 }),
  /** Issued at, ms since the epoch: a revocation of the tenant refuses every token issued at or before it. */
  iat: Type.Integer({ minimum: 0 }),
  scopes: PortalScopes(),
  /** The link's own look, over the operator's `portal.theme`. */
  theme: Type.Optional(PortalThemeSchema),
  /** Shown in the minting product's frame: no top bar of its own, and its height told to the parent. */
  embed: Type.Optional(Type.Boolean()),
  v: Type.Literal(1)
}, { additionalProperties: false })
export type PortalClaims = Static<typeof PortalClaimsSchema>

const claimsShape = TypeCompiler.Compile(PortalClaimsSchema)

/**
 * The signing key: from `secret` when given, else derived from the admin token, so changing the admin token
 * revokes every portal token.
 */
export function portalKey (adminToken: string, secret?: string): KeyObject {
  return createSecretKey(createHmac('sha256', secret ?? adminToken).update(KEY_LABEL).digest())
}

export interface MintInput {
  tenant: string
  /** @defaultValue 3600 */
  ttlSeconds?: number
  /** @defaultValue `['read', 'write']` */
  scopes?: readonly PortalScopeName[]
  theme?: PortalTheme
  /** @defaultValue false */
  embed?: boolean
}

/** A token for one tenant, valid for `ttlSeconds` from `now`. */
export function mintPortalToken (key: KeyObject, input: MintInput, now = Date.now()): { token: string, claims: PortalClaims } {
  const claims: PortalClaims = {
    tenant: input.tenant,
    exp: now + (input.ttlSeconds ?? DEFAULT_PORTAL_TTL_SECONDS) * 1000,
    iat: now,
    scopes: [...(input.scopes ?? DEFAULT_PORTAL_SCOPES)],
    ...(input.theme === undefined ? {} : { theme: input.theme }),
    ...(input.embed === true ? { embed: true } : {}),
    v: 1
  }
  const signed = PORTAL_TOKEN_PREFIX + Buffer.from(JSON.stringify(claims)).toString('base64url')
  return { token: `${signed}.${hmac('sha256', key, signed).toString('base64url')}`, claims }
}

/** True for what looks like a portal token (the guard's choice of check); `verifyPortalToken` decides. */
export const isPortalToken = (value: string): boolean => value.startsWith(PORTAL_TOKEN_PREFIX)

/** The claims of a token signed with `key`, well formed and not expired at `now`; else undefined. */
export function verifyPortalToken (key: KeyObject, token: string, now = Date.now()): PortalClaims | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined
  const match = SHAPE.exec(token)
  if (match === null) return undefined
  const signed = token.slice(0, token.lastIndexOf('.'))
  if (!constantTimeEqual(hmac('sha256', key, signed), Buffer.from(match[2] as string, 'base64url'))) return undefined
  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(match[1] as string, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!claimsShape.Check(claims) || claims.exp <= now) return undefined
  return claims
}

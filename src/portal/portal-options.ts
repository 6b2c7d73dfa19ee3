import { Type, type Static } from '@sinclair/typebox'
import type { DatabaseInput } from '../db/database.js'
import { Opaque, SchemaName } from '../shared/schemas.js'
import { PortalLimitsSchema } from './portal-limits.js'
import { PortalThemeSchema } from './portal-theme.js'

/** An origin as CSP's `frame-ancestors` takes it (`https://app.example`, `https://*.example:8443`) or `'self'`. */
export const FRAME_ANCESTOR_PATTERN = "^(https?://(\\*\\.)?[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?|'self')$"

/** Where portal links start: an http(s) URL with no query or fragment. */
export const PortalPublicUrl = () => Type.String({
  pattern: '^https?://[^\\s?#/]+(/[^\\s?#]*)?$', maxLength: 2000, errorMessage: 'must be an http(s) URL with no query or fragment'
})
/** The portal page's address under `publicUrl` (an origin, or one with a path) and the admin prefix: `https://x.example/admin/portal/`. */
export const portalPageUrl = (publicUrl: string, prefix: string): string => `${publicUrl.replace(/\/+$/, '')}${prefix}/portal/`

export const FrameAncestors = () => Type.Array(Type.String({
  pattern: FRAME_ANCESTOR_PATTERN, errorMessage: "must be an origin such as https://app.example (a leading *. allowed) or 'self'"
}), { maxItems: 32 })

/** `anvilAdmin`'s `portal`: the tenant portal's tokens and page. */
export const PortalOptionsSchema = Type.Object({
  /**
   * The origin (and path, behind a proxy that adds one) the portal's links start with: a minted token's `url` is
   * `<publicUrl><prefix>/portal/#code=…`. @defaultValue the minting request's own origin
   */
  publicUrl: Type.Optional(PortalPublicUrl()),
  /**
   * The origins that may show the portal page in a frame (CSP `frame-ancestors`), such as your product's
   * settings page. @defaultValue none: the page cannot be framed
   */
  frameAncestors: Type.Optional(FrameAncestors()),
  /**
   * The portal's look for every link (light or dark, a primary colour, a font, a logo); a link minted with a
   * `theme` overrides it field by field. @defaultValue Anvil's light theme
   */
  theme: Type.Optional(PortalThemeSchema),
  /**
   * The key portal tokens are signed with (at least 32 characters); changing it revokes every token.
   * @defaultValue derived from the admin token, so changing the admin token revokes every portal token
   */
  secret: Type.Optional(Type.String({ minLength: 32, errorMessage: 'must be at least 32 characters' })),
  /**
   * Where tenants' revocations are kept (migration 0010): a URL or a `pg.Pool`. Without a database the admin API
   * mints no portal tokens. @defaultValue the outgoing-webhook service's database
   */
  database: Type.Optional(Opaque<DatabaseInput>()),
  /** The schema of `database`. @defaultValue `'anvil'` */
  schema: Type.Optional(SchemaName()),
  /**
   * What one tenant's portal tokens may make (docs/operations.md, Tenant isolation): endpoints per tenant, test
   * events, hand retries and (per token) writes per minute, and a test event's size. @defaultValue every limit's default
   */
  limits: Type.Optional(PortalLimitsSchema)
}, { additionalProperties: false })

export type PortalOptions = Static<typeof PortalOptionsSchema>

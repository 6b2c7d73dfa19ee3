import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { Tenant } from '../../src/endpoints/endpoint-schemas.js'
import type { PortalRevocations } from '../../src/portal/portal-revocations.js'
import {
  DEFAULT_PORTAL_TTL_SECONDS, MAX_PORTAL_TTL_SECONDS, PortalScopes, type PortalScopeName
} from '../../src/portal/portal-token.js'
import type { PortalLinks } from '../../src/portal/portal-links.js'
import type { KeyObject } from 'node:crypto'
import { PortalThemeSchema, type PortalTheme } from '../../src/portal/portal-theme.js'
import { portalPageUrl } from '../../src/portal/portal-options.js'
import { PORTAL_READ } from './portal-access.js'

const tags = ['portal']

export interface PortalRouteOptions {
  key: KeyObject
  revocations: PortalRevocations
  /** The links' one-time codes (src/portal/portal-links.ts). */
  links: PortalLinks
  /** The admin API's prefix: the page is at `<prefix>/portal/`. */
  prefix: string
  publicUrl?: string
  /** `portal.theme`: every link's look, which a link's own theme overrides field by field. */
  theme?: PortalTheme
  /** `portal.frameAncestors`: the origins an embedded page tells its height to. */
  frameAncestors?: readonly string[]
}

const TokenInputSchema = Type.Object({
  tenant: Tenant(),
  /** @defaultValue 3600 (an hour); at most 7 days */
  ttlSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PORTAL_TTL_SECONDS })),
  /** @defaultValue `['read', 'write']` */
  scopes: Type.Optional(PortalScopes()),
  /** The link's look, over `portal.theme`. @defaultValue `portal.theme` */
  theme: Type.Optional(PortalThemeSchema),
  /** For a frame in the minting product's page: no top bar, and the page's height posted to its parent. @defaultValue false */
  embed: Type.Optional(Type.Boolean())
}, { additionalProperties: false })

const origin = (request: FastifyRequest): string => `${request.protocol}://${request.host}`

/**
 * Portal tokens: `POST <prefix>/portal/tokens` mints one for API use and, apart from it, a link to the portal page
 * carrying a one-time code in its fragment (no server or proxy logs it, and once used the history's copy opens
 * nothing); `POST <prefix>/portal/session` exchanges that code, once, for the page's session token;
 * `POST <prefix>/portal/tenants/:tenant/revoke` refuses every token of a tenant issued until now, on every replica.
 * Minting and revoking are operators' only; `GET <prefix>/portal/session` tells a portal token's holder whose it is.
 */
export function portalRoutes ({ links, revocations, prefix, publicUrl, theme, frameAncestors = [] }: PortalRouteOptions) {
  return async function anvilPortalRoutes (admin: FastifyInstance): Promise<void> {
    admin.post<{ Body: { tenant: string, ttlSeconds?: number, scopes?: PortalScopeName[], theme?: PortalTheme, embed?: boolean } }>('/portal/tokens', {
      schema: {
        tags,
        summary: 'Mint a portal token for one tenant (for API use), and a link that opens the portal page once',
        body: TokenInputSchema,
        response: { 201: Type.Object({ token: Type.String(), url: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }) }
      }
    }, async (request, reply) => {
      const { token, code, claims } = await links.mint({ ttlSeconds: DEFAULT_PORTAL_TTL_SECONDS, ...request.body })
      const url = `${portalPageUrl(publicUrl ?? origin(request), prefix)}#code=${code}`
      return await reply.code(201).send({ token, url, expiresAt: new Date(claims.exp).toISOString() })
    })

    admin.post<{ Body: { code: string } }>('/portal/session', {
      config: { anvilPublic: true },
      schema: {
        tags,
        summary: 'Exchange a portal link\'s one-time code for the page\'s session token (410 once the link was used)',
        security: [],
        body: Type.Object({ code: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        response: { 201: Type.Object({ token: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }) }
      }
    }, async (request, reply) => {
      const { token, claims } = await links.exchange(request.body.code)
      return await reply.code(201).header('cache-control', 'no-store').send({ token, expiresAt: new Date(claims.exp).toISOString() })
    })

    admin.get('/portal/session', {
      config: PORTAL_READ,
      schema: {
        tags,
        summary: 'The portal token\'s tenant, scopes, expiry, theme and embedding (tenant and expiresAt null for an operator)',
        response: {
          200: Type.Object({
            tenant: Type.Union([Type.String(), Type.Null()]),
            scopes: PortalScopes(),
            expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
            /** `portal.theme` with the link's own over it. */
            theme: PortalThemeSchema,
            embed: Type.Boolean(),
            /** Where an embedded page may post its height: `portal.frameAncestors`. */
            frameAncestors: Type.Array(Type.String())
          })
        }
      }
    }, async (request) => {
      const claims = request.anvilPortal
      return claims === null
        ? { tenant: null, scopes: ['read', 'write'], expiresAt: null, theme: theme ?? {}, embed: false, frameAncestors }
        : {
            tenant: claims.tenant,
            scopes: claims.scopes,
            expiresAt: new Date(claims.exp).toISOString(),
            theme: { ...theme, ...claims.theme },
            embed: claims.embed === true,
            frameAncestors
          }
    })

    admin.post<{ Params: { tenant: string } }>('/portal/tenants/:tenant/revoke', {
      schema: {
        tags,
        summary: 'Revoke every portal token of a tenant issued until now',
        params: Type.Object({ tenant: Tenant() }),
        response: { 200: Type.Object({ tenant: Type.String(), revokedBefore: Type.String({ format: 'date-time' }) }) }
      }
    }, async (request) => {
      const revokedBefore = await revocations.revoke(request.params.tenant)
      return { tenant: request.params.tenant, revokedBefore: revokedBefore.toISOString() }
    })
  }
}

/**
 * The admin HTTP API, under `/admin`: Bearer-token auth (compared in constant time) or the console's session
 * cookie with a CSRF token, TypeBox-checked input, errors as `{ error, code }`, a strict Content-Security-Policy,
 * and an OpenAPI document at `/admin/openapi.json`. Off unless a token is given. The console is served at
 * `/admin/console/`, the tenants' portal page at `/admin/portal/`. Feature routes (outgoing webhooks, the
 * journal) register inside this scope (`routes`).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import cookie from '@fastify/cookie'
import helmet from '@fastify/helmet'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import { DEFAULT_ADMIN_PREFIX, DEFAULT_PREFIX, MIN_ADMIN_TOKEN_LENGTH } from '../../src/shared/constants.js'
import { errors } from '../../src/shared/errors.js'
import { compileCheck, throwInvalid } from '../../src/shared/validate.js'
import { Opaque, Prefix, Whole } from '../../src/shared/schemas.js'
import type { RedisClient } from '../../src/redis/connect.js'
import { adminGuard, type PortalGuard } from './admin-guard.js'
import { CONSOLE_CSP, consoleRoutes, portalPageRoutes } from './console.js'
import { outboundInternals, type Outbound } from '../../src/outbox/outbound.js'
import { outboundAdminRoutes } from './outbound-routes.js'
import { isPool, openDatabase, type Database } from '../../src/db/database.js'
import { requireMigratedAtStart } from '../../src/db/require-migrated.js'
import { createPortalRevocations } from '../../src/portal/portal-revocations.js'
import { PortalOptionsSchema } from '../../src/portal/portal-options.js'
import { createPortalQuotas } from '../../src/portal/portal-limits.js'
import { portalKey } from '../../src/portal/portal-token.js'
import { portalRoutes } from './portal-routes.js'
import { erasureRoutes, type ErasureRegistry } from './erasure-routes.js'
import { createPortalLinks } from '../../src/portal/portal-links.js'
import { adminErrorHandler } from './error-handler.js'
import { SessionKeys } from './session.js'
import { memorySessionStore, redisSessionStore } from './session-store.js'
import { sessionRoutes } from './session-routes.js'
import { refuseNul, typeboxValidatorCompiler } from './validator.js'

export { DEFAULT_ADMIN_PREFIX }
export const DEFAULT_LOGINS_PER_MINUTE = 10
export { MIN_ADMIN_TOKEN_LENGTH, CONSOLE_CSP }

export const AdminOptionsSchema = Type.Object({
  /** Required: every request needs `Authorization: Bearer <token>`, or a console session opened with it. */
  token: Type.String({ minLength: MIN_ADMIN_TOKEN_LENGTH }),
  /** @defaultValue `'/admin'` */
  prefix: Type.Optional(Type.String({ pattern: '^/\\S*[^/]$' })),
  /**
   * Feature route sets (outgoing webhooks, the journal), each registered inside the admin scope: behind the
   * token, with its validator, error handler and OpenAPI document. @defaultValue `[]`
   */
  routes: Type.Optional(Type.Array(Opaque<FastifyPluginAsync>())),
  /** Serve the console at `<prefix>/console/` and the tenants' portal page at `<prefix>/portal/`. @defaultValue true */
  console: Type.Optional(Type.Boolean()),
  /**
   * Failed console logins per client address (`request.ip`; behind a proxy set Fastify's `trustProxy`) in a
   * minute from the first; past it 429 until the minute ends. Successful logins are not counted. @defaultValue 10
   */
  loginsPerMinute: Type.Optional(Whole(1, 10_000)),
  /**
   * Where console sessions and failed logins are kept: a Redis URL (Anvil connects and closes it) or an ioredis
   * client (left open), shared by every replica; without it, this process's memory, so a logout ends the
   * session on this replica only. @defaultValue none (memory)
   */
  redis: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Opaque<RedisClient>()])),
  /** The key prefix of the sessions in Redis. @defaultValue `'{anvil}'` */
  redisPrefix: Type.Optional(Prefix()),
  /** Serve the outgoing-webhook routes of this service. @defaultValue the `anvilOutbound` plugin's, when it was registered first */
  outbound: Type.Optional(Opaque<Outbound>()),
  /**
   * The tenant portal: its tokens (`POST <prefix>/portal/tokens`) and page. On when a database holds the
   * revocations (`portal.database`, or the outgoing-webhook service's). docs/portal.md. @defaultValue `{}`
   */
  portal: Type.Optional(PortalOptionsSchema)
}, { additionalProperties: false })

export type AnvilAdminOptions = Static<typeof AdminOptionsSchema>

const checkOptions = compileCheck(AdminOptionsSchema)

const anvilAdmin: FastifyPluginAsync<AnvilAdminOptions> = async (app, options) => {
  throwInvalid(checkOptions(options)?.replace(/^token: .*/, `token: at least ${MIN_ADMIN_TOKEN_LENGTH} characters`), 'admin ')
  if (options.routes?.some((routes) => typeof routes !== 'function') === true) throw new errors.INVALID_OPTIONS('admin routes: each must be a Fastify plugin (an async function)')
  const prefix = options.prefix ?? DEFAULT_ADMIN_PREFIX
  const store = options.redis === undefined ? memorySessionStore() : redisSessionStore(options.redis, options.redisPrefix ?? DEFAULT_PREFIX)
  const sessions = new SessionKeys(options.token, store)
  const outbound = options.outbound ?? (app.hasDecorator('anvilOutbound') ? app.anvilOutbound : undefined)
  const portalOptions = options.portal ?? {}
  const outboundDb = outbound === undefined ? undefined : outboundInternals(outbound).database
  const portalDb = portalDatabase(portalOptions.database, portalOptions.schema) ?? outboundDb
  // The anvilOutbound plugin checked its own database when it started.
  if (portalDb !== undefined && !(app.hasDecorator('anvilOutbound') && portalDb === outboundInternals(app.anvilOutbound).database)) {
    try {
      await requireMigratedAtStart(portalDb, app.log, 'anvil admin: the portal')
    } catch (err) {
      if (portalDb !== outboundDb) await portalDb.close()
      throw err
    }
  }
  const portal: PortalGuard | undefined = portalDb === undefined
    ? undefined
    : { key: portalKey(options.token, portalOptions.secret), revocations: createPortalRevocations(portalDb), quotas: createPortalQuotas(portalDb, portalOptions.limits) }
  await app.register(async function adminRoutes (admin: FastifyInstance) {
    admin.addHook('onClose', async () => await store.close())
    if (portalDb !== undefined && portalDb !== outboundDb) admin.addHook('onClose', async () => await portalDb.close())
    admin.decorateRequest('anvilPortal', null)
    admin.decorateRequest('anvilQuotas', null)
    admin.setValidatorCompiler(typeboxValidatorCompiler)
    admin.setErrorHandler(adminErrorHandler)
    await admin.register(cookie, { secret: sessions.cookieSecret })
    await admin.register(helmet, { contentSecurityPolicy: { useDefaults: false, directives: CONSOLE_CSP } })
    admin.addHook('onRequest', adminGuard(options.token, sessions, portal))
    admin.addHook('preValidation', refuseNul)
    await admin.register(swagger, {
      openapi: {
        info: { title: 'Anvil admin API', version: '1' },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
        security: [{ bearer: [] }]
      }
    })
    admin.setNotFoundHandler(async (request, reply) =>
      await reply.code(404).send({ error: `no admin route ${request.method} ${request.url}`, code: 'ANVIL_ERR_NOT_FOUND' }))
    admin.get('/openapi.json', { schema: { hide: true } }, async () => admin.swagger())
    await admin.register(sessionRoutes(options.token, sessions, prefix, options.loginsPerMinute ?? DEFAULT_LOGINS_PER_MINUTE))
    if (options.console !== false) {
      await admin.register(consoleRoutes(prefix))
      await admin.register(portalPageRoutes(prefix, portalOptions.frameAncestors ?? []))
    }
    // Feature route sets add their side of erasure here (the journal's), read per request.
    const erasure: ErasureRegistry = {}
    admin.decorate('anvilErasure', erasure)
    if (outbound !== undefined) await admin.register(outboundAdminRoutes(outbound))
    if (portal !== undefined && portalDb !== undefined) {
      const publicUrl = portalOptions.publicUrl?.replace(/\/+$/, '')
      await admin.register(portalRoutes({
        ...portal, links: createPortalLinks(portalDb, portal.key, portal.revocations), prefix, ...(publicUrl === undefined ? {} : { publicUrl }), ...(portalOptions.theme === undefined ? {} : { theme: portalOptions.theme }),
        frameAncestors: portalOptions.frameAncestors ?? []
      }))
    }
    for (const routes of options.routes ?? []) await admin.register(routes)
    await admin.register(erasureRoutes(erasure, outbound))
  }, { prefix })
}

/** The portal's own database, when one is given: a URL (opened here, closed with the app) or a `pg.Pool`. */
function portalDatabase (input: unknown, schema: string | undefined): Database | undefined {
  if (input === undefined) return undefined
  if (typeof input !== 'string' && !isPool(input)) throw new errors.INVALID_OPTIONS('admin portal.database must be a PostgreSQL URL or a pg.Pool')
  return openDatabase(input, schema === undefined ? {} : { schema })
}

const plugin: FastifyPluginAsync<AnvilAdminOptions> = fp(anvilAdmin, { name: '@anvil/fastify-admin', fastify: '5.x' })
export default plugin

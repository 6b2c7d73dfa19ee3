/**
 * The admin HTTP API, under `/admin`: Bearer-token auth (compared in constant time), TypeBox-checked input,
 * errors as `{ error, code }`, and an OpenAPI document at `/admin/openapi.json`. Off unless a token is given.
 * Feature routes (outgoing webhooks, the journal) register inside this scope when their service is configured.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import { MIN_ADMIN_TOKEN_LENGTH } from '../../src/shared/constants.js'
import { errors } from '../../src/shared/errors.js'
import { compileCheck } from '../../src/shared/validate.js'
import { Opaque } from '../../src/shared/schemas.js'
import type { Outbound } from '../../src/outbound/outbound.js'
import { bearerGuard } from './bearer-guard.js'
import { outboundEndpointRoutes } from './outbound-endpoint-routes.js'
import { outboundMessageRoutes } from './outbound-message-routes.js'
import { adminErrorHandler } from './error-handler.js'
import { typeboxValidatorCompiler } from './validator.js'

export const DEFAULT_ADMIN_PREFIX = '/admin'
export { MIN_ADMIN_TOKEN_LENGTH }

export const AdminOptionsSchema = Type.Object({
  /** Required: every request needs `Authorization: Bearer <token>`. */
  token: Type.String({ minLength: MIN_ADMIN_TOKEN_LENGTH }),
  /** @defaultValue `'/admin'` */
  prefix: Type.Optional(Type.String({ pattern: '^/\\S*[^/]$' })),
  /**
   * Feature route sets (outgoing webhooks, the journal, the console), each registered inside the admin scope:
   * behind the token, with its validator, error handler and OpenAPI document. @defaultValue `[]`
   */
  routes: Type.Optional(Type.Array(Opaque<FastifyPluginAsync>())),
  /** Serve the outgoing-webhook routes of this service. @defaultValue the `anvilOutbound` plugin's, when it was registered first */
  outbound: Type.Optional(Opaque<Outbound>())
}, { additionalProperties: false })

export type AnvilAdminOptions = Static<typeof AdminOptionsSchema>

const checkOptions = compileCheck(AdminOptionsSchema)

const anvilAdmin: FastifyPluginAsync<AnvilAdminOptions> = async (app, options) => {
  const problem = checkOptions(options)
  if (problem !== undefined) throw new errors.INVALID_OPTIONS(`admin ${problem.replace(/^token: .*/, `token: at least ${MIN_ADMIN_TOKEN_LENGTH} characters`)}`)
  if (options.routes?.some((routes) => typeof routes !== 'function') === true) throw new errors.INVALID_OPTIONS('admin routes: each must be a Fastify plugin (an async function)')
  await app.register(async function adminRoutes (admin: FastifyInstance) {
    admin.setValidatorCompiler(typeboxValidatorCompiler)
    admin.setErrorHandler(adminErrorHandler)
    admin.addHook('onRequest', bearerGuard(options.token))
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
    for (const routes of options.routes ?? []) await admin.register(routes)
    const outbound = options.outbound ?? (app.hasDecorator('anvilOutbound') ? app.anvilOutbound : undefined)
    if (outbound !== undefined) {
      await admin.register(outboundEndpointRoutes, { outbound })
      await admin.register(outboundMessageRoutes, { outbound })
    }
  }, { prefix: options.prefix ?? DEFAULT_ADMIN_PREFIX })
}

const plugin: FastifyPluginAsync<AnvilAdminOptions> = fp(anvilAdmin, { name: '@anvil/fastify-admin', fastify: '5.x' })
export default plugin

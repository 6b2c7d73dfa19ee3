import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import anvilAdmin from '../../plugins/admin/admin.js'
import { adminErrorHandler } from '../../plugins/admin/error-handler.js'
import { typeboxValidatorCompiler } from '../../plugins/admin/validator.js'
import { decodeCursor, encodeCursor } from '../../src/paging/cursor.js'

const TOKEN = 'admin-token-0123456789'

async function adminApp (): Promise<ReturnType<typeof Fastify>> {
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN })
  t.teardown(async () => await app.close())
  return app
}

t.test('without the right Bearer token every admin route is 401 { error, code }', async (t) => {
  const app = await adminApp()
  for (const authorization of [undefined, '', 'Bearer ', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, TOKEN, `Basic ${TOKEN}`]) {
    const res = await app.inject({ url: '/admin/openapi.json', headers: authorization === undefined ? {} : { authorization } })
    t.equal(res.statusCode, 401, `authorization ${JSON.stringify(authorization)}`)
    t.same(res.json(), { error: 'Missing or wrong admin token', code: 'ANVIL_ERR_UNAUTHORIZED' })
  }
  const unknown = await app.inject({ url: '/admin/nothing-here' })
  t.equal(unknown.statusCode, 401, 'an unknown admin path is not told apart without the token')
})

t.test('with the token: the OpenAPI document, and 404 { error, code } for unknown routes', async (t) => {
  const app = await adminApp()
  const headers = { authorization: `Bearer ${TOKEN}` }
  const doc = await app.inject({ url: '/admin/openapi.json', headers })
  t.equal(doc.statusCode, 200)
  t.equal(doc.json().openapi.slice(0, 2), '3.')
  t.same(doc.json().components.securitySchemes, { bearer: { type: 'http', scheme: 'bearer' } })
  const missing = await app.inject({ url: '/admin/nothing-here', headers })
  t.equal(missing.statusCode, 404)
  t.equal(missing.json().code, 'ANVIL_ERR_NOT_FOUND')
})

t.test('bad options are one line', async (t) => {
  for (const [options, message] of [
    [{ token: 'short' }, /admin token: at least 16 characters/],
    [{}, /admin token/],
    [{ token: TOKEN, tokne: 'x' }, /admin : Unexpected property|admin tokne/],
    [{ token: TOKEN, prefix: 'admin' }, /admin prefix/]
  ] as const) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(anvilAdmin, options as never).ready() }, { code: 'ANVIL_ERR_INVALID_OPTIONS', message })
    await app.close()
  }
})

t.test('route input is checked by TypeBox: unknown fields refused, query strings converted', async (t) => {
  const app = Fastify()
  app.setValidatorCompiler(typeboxValidatorCompiler)
  app.setErrorHandler(adminErrorHandler)
  app.post('/things', {
    schema: {
      body: Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }, { additionalProperties: false })
    }
  }, async (request) => ({ body: request.body, query: request.query }))
  t.teardown(async () => await app.close())
  const ok = await app.inject({ method: 'POST', url: '/things?limit=5', payload: { name: 'a' } })
  t.same(ok.json(), { body: { name: 'a' }, query: { limit: 5 } })
  const extra = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', admin: true } })
  t.equal(extra.statusCode, 400)
  t.equal(extra.json().code, 'ANVIL_ERR_BAD_REQUEST')
  t.match(extra.json().error, /admin|Unexpected property/)
  const badQuery = await app.inject({ method: 'POST', url: '/things?limit=lots', payload: { name: 'a' } })
  t.same(badQuery.json(), { error: 'limit: Expected integer', code: 'ANVIL_ERR_BAD_REQUEST' })
})

t.test('cursors round-trip, and anything else is a 400 error', async (t) => {
  t.same(decodeCursor(encodeCursor(['2026-01-01T00:00:00Z', 42]), ['string', 'number']), ['2026-01-01T00:00:00Z', 42])
  for (const bad of ['', 'not base64!', encodeCursor([1]), encodeCursor(['a', 'b']), Buffer.from('{"a":1}').toString('base64url')]) {
    t.throws(() => decodeCursor(bad, ['string', 'number']), { code: 'ANVIL_ERR_BAD_REQUEST', statusCode: 400 })
  }
})

t.test('routes: feature route sets register inside the scope, behind the token, with its validator and errors', async (t) => {
  const app = Fastify()
  await app.register(anvilAdmin, {
    token: TOKEN,
    routes: [async (admin) => {
      admin.post('/things', { schema: { body: Type.Object({ name: Type.String() }, { additionalProperties: false }) } }, async (request) => request.body)
    }]
  })
  t.teardown(async () => await app.close())
  const headers = { authorization: `Bearer ${TOKEN}` }
  t.equal((await app.inject({ method: 'POST', url: '/admin/things', payload: { name: 'a' } })).statusCode, 401)
  t.same((await app.inject({ method: 'POST', url: '/admin/things', payload: { name: 'a' }, headers })).json(), { name: 'a' })
  t.same((await app.inject({ method: 'POST', url: '/admin/things', payload: { name: 1 }, headers })).json(), { error: 'name: Expected string', code: 'ANVIL_ERR_BAD_REQUEST' })
  t.ok((await app.inject({ url: '/admin/openapi.json', headers })).json().paths['/admin/things'] !== undefined, 'in the OpenAPI document')
  const bad = Fastify()
  await t.rejects(async () => { await bad.register(anvilAdmin, { token: TOKEN, routes: ['nope'] as never }).ready() },
    { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /admin routes: each must be a Fastify plugin/ })
  await bad.close()
})

/**
 * The admin stats count every signature failure by reason: a wrong signature, a malformed or missing
 * `x-signature` and (for timestamped schemes) a stale one; a refusal that is not about the signature (a body
 * over the limit) is none. Real requests through the ingress route, on a private Redis.
 */
import t from 'tap'
import Fastify from 'fastify'
import anvil from '../../plugins/ingress.js'
import anvilAdmin from '../../plugins/admin/admin.js'
import { journalAdminRoutes } from '../../plugins/journal/admin-routes.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { signAnvil } from '../../src/providers/anvil.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const TOKEN = 'admin-token-0123456789'
const SECRET = 'whsec_signature_failures_0123'
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

t.test('a wrong, a malformed and a missing x-signature each count, by reason; a 413 does not', async (t) => {
  const app = Fastify()
  await app.register(anvil, { redis: redis.url, secret: SECRET, source: 'billing', bodyLimit: 1024, queueName: 'sigfail' })
  await app.register(anvilAdmin, { token: TOKEN, routes: [journalAdminRoutes(openEventLog({ redis: redis.url, queueName: 'sigfail' }))] })
  t.teardown(async () => await app.close())
  const body = '{"id":"evt_sig","type":"test.ping"}'
  const post = async (headers: Record<string, string>, payload = body) =>
    (await app.inject({ method: 'POST', url: '/webhooks', headers: { 'content-type': 'application/json', ...headers }, payload })).statusCode
  t.equal(await post({ 'x-signature': signAnvil('whsec_some_other_secret_0123', body) }), 401, 'wrong')
  t.equal(await post({ 'x-signature': 'sha256=XYZ' }), 401, 'malformed')
  t.equal(await post({ 'x-signature': 'sha256=' + 'A'.repeat(64) }), 401, 'malformed: upper case')
  t.equal(await post({}), 401, 'missing')
  t.equal(await post({ 'x-signature': signAnvil(SECRET, 'x'.repeat(2000)) }, 'x'.repeat(2000)), 413, 'too large: not a signature failure')
  t.equal(await post({ 'x-signature': signAnvil(SECRET, body) }), 202, 'a good one')
  const stats = (await app.inject({ url: '/admin/stats', headers: { authorization: `Bearer ${TOKEN}` } })).json()
  t.same(stats.signatureFailures, [{ source: 'billing', lastHour: 4, lastHourByReason: { bad_signature: 1, malformed: 2, missing: 1 }, dayBaselinePerHour: 0 }])
})

import t from 'tap'
import { createHmac } from 'node:crypto'
import { anvilHmacScheme, signAnvil } from '../../src/providers/anvil.js'
import { errors } from '../../src/shared/errors.js'
import { commandsSinceReset } from '../helpers/redis.js'
import { startTarget } from '../helpers/target.js'
import { SECRET, buildApp, signed } from '../helpers/app.js'
import { eventually } from '../helpers/eventually.js'

const body = Buffer.from('{"id":"evt_sig"}')
const hex = createHmac('sha256', SECRET).update(body).digest('hex')

t.test('the scheme checks HMAC-SHA256 of the raw bytes, in one canonical form only', async (t) => {
  const scheme = anvilHmacScheme([SECRET])
  t.same(scheme.verify(body, { 'x-signature': `sha256=${hex}` }), { signature: `sha256=${hex}` })
  t.equal(signAnvil(SECRET, body), `sha256=${hex}`)
  const rejected: Array<[string, Record<string, string | string[]>, string]> = [
    ['missing header', {}, 'ANVIL_ERR_SIGNATURE_MISSING'],
    ['upper-case hex', { 'x-signature': `sha256=${hex.toUpperCase()}` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['an extra trailing digit (odd length)', { 'x-signature': `sha256=${hex}0` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['a missing digit (odd length)', { 'x-signature': `sha256=${hex.slice(1)}` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['two extra digits (wrong length)', { 'x-signature': `sha256=${hex}00` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['too short', { 'x-signature': `sha256=${hex.slice(0, 62)}` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['non-hex', { 'x-signature': `sha256=${hex.slice(0, 63)}g` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['no prefix', { 'x-signature': hex }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['wrong prefix', { 'x-signature': `sha1=${hex}` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['upper-case prefix', { 'x-signature': `SHA256=${hex}` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['surrounding space', { 'x-signature': ` sha256=${hex}` }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['empty', { 'x-signature': '' }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['repeated header', { 'x-signature': [`sha256=${hex}`, `sha256=${hex}`] }, 'ANVIL_ERR_SIGNATURE_MALFORMED'],
    ['wrong secret', { 'x-signature': signAnvil('other', body) }, 'ANVIL_ERR_SIGNATURE_INVALID'],
    ['signature of other bytes', { 'x-signature': signAnvil(SECRET, Buffer.from('{"id":"evt_sih"}')) }, 'ANVIL_ERR_SIGNATURE_INVALID']
  ]
  for (const [name, headers, code] of rejected) {
    t.throws(() => scheme.verify(body, headers), { code, statusCode: 401 }, name)
  }
})

t.test('several secrets: any of them verifies (rotation)', async (t) => {
  const scheme = anvilHmacScheme(['new-secret', SECRET])
  t.ok(scheme.verify(body, { 'x-signature': `sha256=${hex}` }))
  t.ok(scheme.verify(body, { 'x-signature': signAnvil('new-secret', body) }))
  t.throws(() => scheme.verify(body, { 'x-signature': signAnvil('retired', body) }), { code: 'ANVIL_ERR_SIGNATURE_INVALID' })
  t.throws(() => anvilHmacScheme([]), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
})

t.test('a refusal is cheap: its error carries no stack; errors of options and calls keep theirs', async (t) => {
  const scheme = anvilHmacScheme([SECRET])
  let refusal: unknown
  try {
    scheme.verify(body, { 'x-signature': signAnvil('wrong', body) })
  } catch (err) {
    refusal = err
  }
  t.match(refusal, { code: 'ANVIL_ERR_SIGNATURE_INVALID', statusCode: 401 })
  t.ok(refusal instanceof Error)
  t.equal((refusal as Error).stack, undefined, 'no stack captured for a forged request')
  for (const refused of [new errors.SIGNATURE_MISSING('x'), new errors.SIGNATURE_MALFORMED('x'), new errors.STALE(300), new errors.BODY_TOO_LARGE(1), new errors.REDIS_UNAVAILABLE()]) {
    t.equal(refused.stack, undefined, `${refused.code}: no stack`)
  }
  for (const mistake of [new errors.INVALID_OPTIONS('x'), new errors.INVALID_CONFIG('x'), new errors.INVALID_PAYLOAD('x')]) {
    t.match(mistake.stack, /\n\s+at /, `${mistake.code}: a stack, to find the call`)
  }
})

t.test('a rejected request gets 401 JSON and costs Redis nothing', async (t) => {
  const redis = await startTarget()
  t.teardown(() => redis.stop())
  const app = await buildApp(redis.url, { queueName: 'sig' })
  t.teardown(() => app.close())
  // Warm up: the first add loads BullMQ's scripts.
  t.equal((await app.inject(signed('{"warm":1}'))).statusCode, 202)
  // BullMQ's Queue writes its meta once its own connection is ready, which on a cluster can be after the first
  // add was answered (CI saw its CLUSTER SLOTS and HSET counted against the rejections): the counts start after it.
  await eventually('the queue\'s meta written', async () => await redis.command('hexists', '{anvil}:sig:meta', 'version') === 1)
  await redis.command('config', 'resetstat')

  const bad = [
    { 'x-signature': `sha256=${hex.toUpperCase()}` },
    { 'x-signature': `sha256=${hex}0` },
    { 'x-signature': signAnvil('wrong', body) },
    {}
  ]
  for (const headers of bad) {
    const res = await app.inject({ method: 'POST', url: '/webhooks', payload: body, headers: { 'content-type': 'application/json', ...headers } })
    t.equal(res.statusCode, 401)
    t.match(res.headers['content-type'], /^application\/json/)
    const json = res.json()
    t.same(Object.keys(json).sort(), ['code', 'error'])
    t.match(json.code, /^ANVIL_ERR_SIGNATURE_/)
  }
  t.same(await commandsSinceReset(redis), {}, 'no Redis command for rejected requests')

  const good = await app.inject(signed(body))
  t.equal(good.statusCode, 202)
  t.not(Object.keys(await commandsSinceReset(redis)).length, 0, 'an accepted request does reach Redis (the check above can fail)')
})

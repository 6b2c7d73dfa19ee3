import t from 'tap'
import { createKeyDeriver, eventIdKey, payloadKey, signatureKey, type KeyInput } from '../../src/inbound/idempotency.js'
import { lazyJson } from '../../src/shared/json.js'

function input (payload: string, extra: Partial<KeyInput> = {}): KeyInput {
  const bytes = Buffer.from(payload)
  return { source: 'default', payload: bytes, headers: {}, json: lazyJson(bytes), ...extra }
}

t.test('keys are length-prefixed: shifting bytes between signature and body changes the key', async (t) => {
  t.not(signatureKey('s', 'ab', Buffer.from('c')), signatureKey('s', 'a', Buffer.from('bc')))
  t.not(signatureKey('ab', 'c', Buffer.alloc(0)), signatureKey('a', 'bc', Buffer.alloc(0)), 'source and signature too')
  t.equal(signatureKey('s', 'ab', Buffer.from('c')), signatureKey('s', 'ab', Buffer.from('c')), 'and stable')
  t.match(signatureKey('s', 'ab', Buffer.from('c')), /^[0-9a-f]{64}$/)
})

t.test('keys stay what earlier versions stored: a redelivery after an upgrade is still a duplicate', async (t) => {
  // Written by the implementation of 9d3902f; the dedupe keys in a running Redis were made this way.
  t.equal(signatureKey('default', 'sha256=ab', Buffer.from('{"id":1}')), '13a96071f62b2ef9ffb0fe7b52af2ac6f43d2dd6e40046a0259ad0f45585767a')
  t.equal(payloadKey('default', Buffer.from('é')), '040ce2a0356f35b6176f72dd72b4db2c60414900026b60e822829b81d9e95fdf')
  t.equal(eventIdKey('stripé', 'evt_1'), '82d8f050f3a7057309de04a9e8fd681164ad1ebd3041f88f71a5afbc69c2117c', 'a multi-byte string part counted in bytes')
})

t.test('kinds and sources never share keys', async (t) => {
  const keys = new Set([
    payloadKey('a', Buffer.from('x')), eventIdKey('a', 'x'), signatureKey('a', '', Buffer.from('x')),
    payloadKey('b', Buffer.from('x')), eventIdKey('b', 'x')
  ])
  t.equal(keys.size, 5)
})

t.test('signature strategy (default): signature and body', async (t) => {
  const derive = createKeyDeriver()
  const a = derive(input('{"id":1}', { signature: 'sha256=aa' }))
  t.same(a, { key: signatureKey('default', 'sha256=aa', Buffer.from('{"id":1}')) })
  t.not(derive(input('{"id":1}', { signature: 'sha256=bb' })).key, a.key)
  t.same(derive(input('{"id":1}')), { key: payloadKey('default', Buffer.from('{"id":1}')) }, 'no signature: the payload')
})

t.test('payload strategy ignores the signature', async (t) => {
  const derive = createKeyDeriver('payload')
  t.equal(derive(input('x', { signature: 'sha256=aa' })).key, derive(input('x', { signature: 'sha256=bb' })).key)
})

t.test('header strategy: the provider event id, whatever else changes', async (t) => {
  const derive = createKeyDeriver({ header: 'X-Event-Id' })
  const a = derive(input('one', { headers: { 'x-event-id': 'evt_9' }, signature: 'sha256=aa' }))
  const b = derive(input('two', { headers: { 'x-event-id': 'evt_9' }, signature: 'sha256=bb' }))
  t.same(a, { key: eventIdKey('default', 'evt_9'), eventId: 'evt_9' })
  t.same(a, b)
  t.same(derive(input('one')), { key: payloadKey('default', Buffer.from('one')) }, 'missing header: the payload')
})

t.test('bodyField strategy: a (dotted) JSON field, parsed only after verification', async (t) => {
  const derive = createKeyDeriver({ bodyField: 'data.id' })
  t.same(derive(input('{"data":{"id":"evt_1"},"t":1}')), { key: eventIdKey('default', 'evt_1'), eventId: 'evt_1' })
  t.same(derive(input('{"data":{"id":42}}')).eventId, '42', 'numbers are ids too')
  for (const body of ['{"data":{}}', '{"data":"x"}', 'not json', '{"data":{"id":""}}', '{"data":{"id":{}}}']) {
    t.same(derive(input(body)), { key: payloadKey('default', Buffer.from(body)) }, `${body}: falls back to the payload`)
  }
})

t.test('a function strategy returns the event id', async (t) => {
  const derive = createKeyDeriver((i) => i.headers['x-id'] as string | undefined)
  t.same(derive(input('a', { headers: { 'x-id': 'k1' } })), { key: eventIdKey('default', 'k1'), eventId: 'k1' })
})

t.test('an unknown strategy is refused with a clear error', async (t) => {
  for (const bad of ['sig', { header: '' }, { bodyField: 3 }, {}, null]) {
    t.throws(() => createKeyDeriver(bad as never), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  }
})

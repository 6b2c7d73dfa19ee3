/**
 * A generated corpus of malformed requests against a listening gateway on a real Redis: no 5xx,
 * no crash, and no job for anything that should have been rejected.
 */
import t from 'tap'
import { request, Agent } from 'node:http'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { TestRedis } from '../helpers/redis.js'
import { buildApp, SECRET } from '../helpers/app.js'
import { inspectQueue } from '../helpers/queue.js'
import { signAnvil } from '../../src/providers/anvil.js'

// 200 requests of each of the 12 kinds. Every choice a kind makes is among at most 72 (a truncated signature's
// length, swept in order below; the others drawn), which 200 draws cover; 10,000 (833 a kind) only repeated them.
const CORPUS_SIZE = 2_400
const BODY_LIMIT = 4096
const CONCURRENCY = 16

/** A small deterministic PRNG, so a failing case can be found again. */
function prng (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

interface Case {
  kind: string
  method: string
  path: string
  headers: Record<string, string>
  body?: Buffer
  /** True when a 202 is the right answer (a valid signature over whatever bytes). */
  acceptable: boolean
}

function generate (random: () => number): Case[] {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)))
  const hex = (n: number): string => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('')
  const cases: Case[] = []
  const makers: Array<(i: number) => Case> = [
    (i) => ({ kind: 'random signature', method: 'POST', path: '/webhooks', headers: { 'content-type': 'application/json', 'x-signature': 'sha256=' + hex(64) }, body: Buffer.from(`{"n":${i}}`), acceptable: false }),
    (i) => {
      const body = Buffer.from(`{"n":${i}}`)
      const full = signAnvil(SECRET, body)
      // Every length from 0 to all but the last character, in turn.
      return { kind: 'truncated signature', method: 'POST', path: '/webhooks', headers: { 'x-signature': full.slice(0, Math.floor(i / makers.length) % full.length) }, body, acceptable: false }
    },
    (i) => {
      const body = Buffer.from(`{"n":${i}}`)
      const full = signAnvil(SECRET, body)
      // (A leading space is not among them: HTTP strips it from a header value before anyone sees it.)
      const variants = [full.toUpperCase(), full + '0', full + '00', full.replace('sha256=', 'sha1='), full.replace('sha256=', ''), full.slice(0, -1) + 'g', 'sha256=' + Buffer.from(full.slice(7), 'hex').toString('base64')]
      return { kind: 'mangled signature', method: 'POST', path: '/webhooks', headers: { 'x-signature': pick(variants) }, body, acceptable: false }
    },
    (i) => ({ kind: 'missing signature', method: 'POST', path: '/webhooks', headers: { 'content-type': pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded']) }, body: Buffer.from(`n=${i}`), acceptable: false }),
    (i) => ({ kind: 'binary garbage header', method: 'POST', path: '/webhooks', headers: { 'x-signature': 'sha256=' + bytes(32).toString('latin1').replace(/[^\x20-\x7e]/g, 'z') }, body: bytes(1 + i % 64), acceptable: false }),
    () => {
      const body = bytes(1 + Math.floor(random() * 512))
      return { kind: 'invalid UTF-8, valid signature', method: 'POST', path: '/webhooks', headers: { 'content-type': pick(['application/json', 'text/plain; charset=utf-8', 'application/octet-stream']), 'x-signature': signAnvil(SECRET, body) }, body, acceptable: true }
    },
    (i) => {
      const body = Buffer.from(`{"n":${i},`)
      return { kind: 'invalid JSON, valid signature', method: 'POST', path: '/webhooks', headers: { 'content-type': 'application/json', 'x-signature': signAnvil(SECRET, body) }, body, acceptable: true }
    },
    (i) => {
      const body = Buffer.from(`${i} `.repeat(8))
      const headers: Record<string, string> = { 'x-signature': signAnvil(SECRET, body) }
      const type = pick(['', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x', 'image/png', 'application/x-www-form-urlencoded', 'text/xml', '*/*', ';;;'])
      if (type !== '') headers['content-type'] = type
      // A Content-Type that is no media type at all is refused (415) before the signature is looked at.
      return { kind: type === ';;;' ? 'invalid media type' : 'odd content type, valid signature', method: 'POST', path: '/webhooks', headers, body, acceptable: type !== ';;;' }
    },
    (i) => {
      const over = random() < 0.5
      const body = Buffer.alloc(over ? BODY_LIMIT + 1 + (i % 100) : BODY_LIMIT - (i % 100), 0x61 + (i % 26))
      return { kind: over ? 'over the limit' : 'just under the limit', method: 'POST', path: '/webhooks', headers: { 'x-signature': signAnvil(SECRET, body) }, body, acceptable: !over }
    },
    (i) => {
      const body = Buffer.from(`{"m":${i}}`)
      return { kind: 'method or path', method: pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']), path: pick(['/webhooks', '/webhooks/', '/WEBHOOKS', '/webhooks/x', '/', '/webhooks%00']), headers: { 'x-signature': signAnvil(SECRET, body) }, body, acceptable: false }
    },
    (i) => {
      const body = Buffer.from(`{"p":${i}}`)
      return { kind: 'path variation, POST', method: 'POST', path: pick(['/webhooks/', '/WEBHOOKS', '/webhooks/extra', '/hooks', '/webhooks%2f']), headers: { 'x-signature': signAnvil(SECRET, body) }, body, acceptable: false }
    },
    (i) => ({ kind: 'huge header', method: 'POST', path: '/webhooks', headers: { 'x-signature': 'sha256=' + 'a'.repeat(64), 'x-padding': 'p'.repeat(20_000 + i % 1000) }, body: Buffer.from('{}'), acceptable: false })
  ]
  for (let i = 0; i < CORPUS_SIZE; i++) cases.push((makers[i % makers.length] as (i: number) => Case)(i))
  return cases
}

/** Kinds the server answers and then closes the connection on (the rest of the request is not read). */
const CLOSES_CONNECTION = new Set(['huge header', 'over the limit'])

function send (port: number, agent: Agent, c: Case): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: c.method, path: c.path, headers: c.headers, agent: CLOSES_CONNECTION.has(c.kind) ? false : agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(c.body)
  })
}

/** Bytes that are not HTTP at all: the server must close or answer 400, and stay up. */
function sendRaw (port: number, raw: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(raw))
    let answer = ''
    socket.on('data', (chunk) => { answer += chunk.toString('latin1') })
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''))
    socket.on('error', () => resolve(''))
  })
}

t.test(`${CORPUS_SIZE} malformed requests: no 5xx, no crash, no job that should not be`, async (t) => {
  const redis = await TestRedis.start()
  t.teardown(() => redis.stop())
  const app = await buildApp(redis.url, { queueName: 'corpus', bodyLimit: BODY_LIMIT })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  t.teardown(() => agent.destroy())

  const cases = generate(prng(20261201))
  const statuses = new Array<number>(cases.length)
  let next = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < cases.length) {
      const i = next++
      statuses[i] = await send(port, agent, cases[i] as Case).catch(() => -1)
    }
  }))

  const byKind = new Map<string, Map<number, number>>()
  cases.forEach((c, i) => {
    const counts = byKind.get(c.kind) ?? new Map<number, number>()
    counts.set(statuses[i] as number, (counts.get(statuses[i] as number) ?? 0) + 1)
    byKind.set(c.kind, counts)
  })
  t.comment([...byKind].map(([kind, counts]) => `${kind}: ${[...counts].map(([s, n]) => `${s}×${n}`).join(' ')}`).join('\n'))

  t.equal(statuses.filter((s) => s >= 500).length, 0, 'no 5xx')
  t.equal(statuses.filter((s) => s === -1).length, 0, 'every request was answered')
  const wronglyAccepted = cases.filter((c, i) => !c.acceptable && statuses[i] === 202)
  t.same(wronglyAccepted.map((c) => c.kind), [], 'nothing that should be rejected got 202')
  const acceptable = cases.filter((c) => c.acceptable)
  t.ok(acceptable.every((c) => statuses[cases.indexOf(c)] === 202), 'validly signed bytes are accepted, whatever they are')

  for (const raw of [Buffer.from('\x00\xff\x16\x03\x01 not http\r\n\r\n'), Buffer.from('POST /webhooks HTTP/1.1\r\nContent-Length: -1\r\n\r\n'), Buffer.from('POST /webhooks HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n')]) {
    const line = await sendRaw(port, raw)
    t.ok(line === '' || /^HTTP\/1\.1 4\d\d/.test(line), `raw bytes answered ${JSON.stringify(line)}`)
  }
  const alive = await send(port, agent, { kind: 'alive', method: 'POST', path: '/webhooks', headers: { 'x-signature': signAnvil(SECRET, 'alive') }, body: Buffer.from('alive'), acceptable: true })
  t.equal(alive, 202, 'still serving afterwards')

  const queue = inspectQueue(redis.url, 'corpus')
  t.teardown(() => queue.close())
  const expectedJobs = new Set(acceptable.map((c) => (c.body as Buffer).toString('base64'))).size + 1
  t.equal(await queue.count(), expectedJobs, 'one job per distinct accepted body, and none for the rejected')
})

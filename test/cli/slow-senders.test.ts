/**
 * `anvil serve` against slow senders, over real sockets: a request not complete within
 * ANVIL_REQUEST_TIMEOUT_MS gets 408 and is closed, and ANVIL_MAX_IN_FLIGHT_BYTES caps the bodies held at once.
 * Helpers: test/helpers/cli.ts, test/helpers/raw-socket.ts.
 */
import t from 'tap'
import { connect } from 'node:net'
import { parseJson, startCli } from '../helpers/cli.js'
import { signAnvil } from '../../src/providers/anvil.js'
import { TestRedis } from '../helpers/redis.js'
import { partialPost, statusOf } from '../helpers/raw-socket.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

t.test('serve: a request not complete within ANVIL_REQUEST_TIMEOUT_MS gets 408 and is closed; held bodies are capped by ANVIL_MAX_IN_FLIGHT_BYTES', async (t) => {
  const mib = 1024 * 1024
  const cli = startCli(t, ['serve'], {
    env: {
      REDIS_URL: redis.url, WEBHOOK_SECRET: 'whsec_slow_senders_0123', HOST: '127.0.0.1', PORT: '0', ANVIL_QUEUE: 'cli-serve-slow',
      ANVIL_REQUEST_TIMEOUT_MS: '1000', ANVIL_MAX_IN_FLIGHT_BYTES: String(4 * mib)
    }
  })
  const port = await cli.listeningPort('anvil serve: listening')

  // Headers, part of the body, then silence: the probe's socket was still open at 200 s.
  const silent = await partialPost(port, { declared: 1000, sent: 10 })
  await silent.closed
  t.equal(statusOf(silent.received()), 408, 'answered 408, then closed')
  // Headers never finished: closed the same way.
  const unfinished = connect(port, '127.0.0.1')
  unfinished.on('error', () => {})
  unfinished.write('POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n')
  let unfinishedAnswer = ''
  unfinished.on('data', (chunk: Buffer) => { unfinishedAnswer += chunk.toString() })
  await new Promise((resolve) => unfinished.once('close', resolve))
  t.equal(statusOf(unfinishedAnswer), 408)

  // Many such senders, each declaring 1 MiB and sending a quarter of it: four fit under the cap, the rest get
  // 503 at once, and the four are closed by the timeout; nothing stays open.
  const clients = await Promise.all(Array.from({ length: 20 }, async () => await partialPost(port, { declared: mib, sent: mib / 4 })))
  await Promise.all(clients.map(async (client) => await client.closed))
  const statuses = clients.map((client) => statusOf(client.received()))
  t.equal(statuses.filter((s) => s === 408).length, 4, 'four held until the timeout')
  t.equal(statuses.filter((s) => s === 503).length, 16, 'the rest refused before their bodies were read')
  t.ok(clients.every((client) => client.socket.destroyed), 'every socket closed')

  // Their bytes are given back: a real webhook gets in.
  const body = '{"id":"evt_after_slow"}'
  const accepted = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': signAnvil('whsec_slow_senders_0123', body) }, body })
  t.equal(accepted.status, 202)
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  t.match(metrics, /anvil_webhooks_rejected_total\{[^}]*reason="timeout"[^}]*\} 5/, 'the slow bodies counted as timeouts')
  t.notMatch(metrics, /reason="malformed"/)
  t.equal(await cli.stop('SIGTERM'), 0)
  t.notOk(cli.lines.some((line) => parseJson(line)?.msg === 'anvil: request rejected'), 'no rejection lines for slow clients')
  t.ok(cli.lines.some((line) => parseJson(line)?.msg === 'anvil: too many bodies in flight, answered 503'))
})

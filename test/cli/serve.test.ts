/**
 * `anvil serve`: the README quickstart verbatim, LOG_LEVEL, SIGTERM; against slow senders, over real sockets, a
 * request not complete within ANVIL_REQUEST_TIMEOUT_MS gets 408 and is closed, and ANVIL_MAX_IN_FLIGHT_BYTES caps
 * the bodies held at once. Helpers: test/helpers/cli.ts, test/helpers/raw-socket.ts.
 */
import t from 'tap'
import { QUICKSTART, curlResponse, readmeBlock, HAS_CURL, inspect, NEVER_PRINTED, parseJson, shell, startCli, holdPort } from '../helpers/cli.js'
import { connect } from 'node:net'
import { signAnvil } from '../../src/providers/anvil.js'
import { partialPost, statusOf } from '../helpers/raw-socket.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

/** The README's quickstart block, less installing and starting the server (the test starts its own). */
function readmeQuickstart (): string {
  return readmeBlock('sh', 'openssl dgst').split('\n').filter((line) => !/^(npm |#)|anvil(\.js)? (serve|worker)/.test(line.trim())).join('\n')
}

// Three `anvil serve` processes where each contract once had its own (a start costs about 1 s of CPU): the
// quickstart's with its metrics apart, a silent one at warn without metrics, and one started before Redis.
t.test('anvil serve --port 0 (PORT held) with ANVIL_METRICS_PORT=0', async (t) => {
  // --port wins over PORT: PORT names a port this file holds, where the server could not listen.
  const held = await holdPort(t)
  const cli = startCli(t, ['serve', '--port', '0'], {
    env: { REDIS_URL: redis.url, WEBHOOK_SECRET: 'whsec_quickstart_0123', HOST: '127.0.0.1', PORT: String(held), ANVIL_QUEUE: 'cli-quickstart', ANVIL_METRICS_PORT: '0' }
  })
  const port = await cli.listeningPort('anvil serve: listening')

  await t.test('serve: ANVIL_METRICS_PORT serves metrics apart', async (t) => {
    const metricsPort = await cli.listeningPort('anvil serve: metrics listening')
    t.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'not on the webhook port')
    t.match(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), /# TYPE anvil_webhooks_received_total counter/)
  })

  await t.test('serve: the quickstart works verbatim; a repeat is replayed with the same jobId', async (t) => {
    t.not(port, held, '--port, not PORT')
    const here = (script: string): string => script.replaceAll('http://127.0.0.1:3000', `http://127.0.0.1:${port}`)
    const userEnv = { WEBHOOK_SECRET: 'whsec_quickstart_0123' }

    // The signing step alone, through a real shell and the real openssl; the request through fetch.
    const body = '{"id":"evt_1","type":"test.ping"}'
    const sig = (await shell(`body='${body}'; printf '%s' "$body" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -hex | sed 's/^.* //'`, userEnv)).trim()
    t.match(sig, /^[0-9a-f]{64}$/)
    const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': `sha256=${sig}` }, body
    })
    t.equal(response.status, 202)
    const accepted = await response.json() as { jobId: string }
    t.match(accepted, { jobId: /^e_/, replayed: false })

    if (HAS_CURL) {
      t.same(curlResponse(await shell(here(QUICKSTART), userEnv)), { status: 202, body: { jobId: accepted.jobId, replayed: true } },
        'the one-line quickstart, run as is')
      t.same(curlResponse(await shell(here(readmeQuickstart()), userEnv)), { status: 202, body: { jobId: accepted.jobId, replayed: true } },
        "the README's quickstart, run as is")
    } else {
      t.comment('curl is not on PATH: the quickstart ran with fetch only')
    }
    t.equal(await inspect(t, redis.url, 'cli-quickstart').count(), 1, 'one job in Redis')

    t.equal(await cli.stop('SIGTERM'), 0, 'SIGTERM exits 0')
    t.ok(cli.lines.filter((line) => line !== '').every((line) => parseJson(line) !== undefined), 'stdout is JSON lines')
    t.ok(cli.lines.some((line) => parseJson(line)?.msg === 'anvil: shutting down'), 'closed gracefully')
    t.notMatch(cli.output, /whsec_quickstart_0123/, 'the secret is not logged')
    t.notMatch(cli.output, new RegExp(sig), 'the signature is not logged')
  })
})

t.test('anvil serve --metrics-path off with LOG_LEVEL=warn', async (t) => {
  const cli = startCli(t, ['serve', '--metrics-path', 'off'], {
    env: { REDIS_URL: redis.url, WEBHOOK_SECRET: NEVER_PRINTED, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' }
  })
  // Nothing is logged at warn: the port is read from the kernel's socket table, and readiness is it answering (401: unsigned).
  const port = await cli.boundPort()
  const status = await eventually('an answer from POST /webhooks', async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', body: '{}' })).status } catch { return undefined }
  })

  await t.test('serve: ANVIL_METRICS_PATH=off serves none', async (t) => {
    t.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404)
    t.equal((await fetch(`http://127.0.0.1:${port}/health/live`)).status, 200)
  })

  await t.test('serve honours LOG_LEVEL and exits 0 on SIGTERM', async (t) => {
    t.equal(status, 401)
    t.equal(await cli.stop('SIGTERM'), 0)
    t.equal(cli.output, '', 'no info lines at LOG_LEVEL=warn')
  })
})

t.test('anvil serve started while Redis is unreachable', async (t) => {
  const late = await TestRedis.start()
  t.teardown(() => late.stop())
  await late.kill()
  const cli = startCli(t, ['serve'], {
    env: { REDIS_URL: late.url, WEBHOOK_SECRET: 'whsec_ops_0123456789', HOST: '127.0.0.1', PORT: '0', ANVIL_QUEUE: 'cli-serve-ops' }
  })
  const port = await cli.listeningPort('anvil serve: listening')
  const base = `http://127.0.0.1:${port}`

  await t.test('serve started while Redis is unreachable: stays up and says so, not ready, then ready once Redis is there', async (t) => {
    await cli.log('anvil: Redis is not reachable yet; webhooks get 503 until it is')
    const ready = async (): Promise<number> => (await fetch(`${base}/health/ready`)).status
    t.equal(await ready(), 503)
    t.equal(cli.child.exitCode, null, 'still running')
    await late.startProcess()
    t.equal(await eventually('ready() === 200 ? 200 : undefined', async () => await ready() === 200 ? 200 : undefined), 200, 'ready without a restart')
  })

  // The same server, once Redis is there: what one that found it at once serves.
  await t.test('serve: health routes, metrics on the same port, one request id on every line of a request', async (t) => {
    t.same(await (await fetch(`${base}/health/live`)).json(), { status: 'live' })
    const ready = await fetch(`${base}/health/ready`)
    t.same([ready.status, await ready.json()], [200, { status: 'ready', redis: 'up' }])

    const body = '{"id":"evt_ops"}'
    const response = await fetch(`${base}/webhooks`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': signAnvil('whsec_ops_0123456789', body), 'x-request-id': 'req-from-lb' }, body
    })
    const { jobId } = await response.json() as { jobId: string }
    const metrics = await (await fetch(`${base}/metrics`)).text()
    t.match(metrics, /anvil_events_enqueued_total\{[^}]*source="default"[^}]*\} 1/)
    t.match(metrics, /anvil_queue_jobs\{queue="cli-serve-ops",state="waiting"\} 1/)

    t.equal(await cli.stop('SIGTERM'), 0)
    const lines = cli.lines.map(parseJson).filter((entry) => entry?.requestId === 'req-from-lb')
    t.ok(lines.length >= 3, 'incoming, accepted and completed lines carry the request id')
    t.ok(lines.some((entry) => entry?.msg === 'anvil: accepted' && entry.jobId === jobId), 'the job id once enqueued')
    t.notOk(cli.lines.some((line) => parseJson(line)?.req !== undefined && /health|metrics/.test(String((parseJson(line)?.req as { url?: string }).url))),
      'probes and scrapes are not logged')
  })
})

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

/** Forward mode from the command line: `anvil serve` + `anvil worker` with a sources file that forwards, and no handler. */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { createOutbound } from '../../src/outbox/outbound.js'
import { signRequest } from '../../src/testing/sign-request.js'
import { runCli, startCli, tempDir } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const STRIPE_SECRET = 'whsec_' + randomBytes(24).toString('hex')
const FORWARD_SECRET = 'whsec_' + randomBytes(32).toString('base64')

t.test('serve + worker, no handler: a signed Stripe event reaches the service, signed by Anvil', async (t) => {
  const verified: unknown[] = []
  const receiver = await startReceiver((req, res) => {
    try {
      verified.push({ event: new Webhook(FORWARD_SECRET).verify(req.body, req.headers as Record<string, string>), id: req.headers['anvil-event-id'], type: req.headers['anvil-event-type'] })
    } catch {
      res.statusCode = 401
    }
    res.end()
  })
  t.teardown(() => receiver.close())
  const dir = tempDir(t)
  const config = join(dir, 'sources.yaml')
  writeFileSync(config, [
    'sources:',
    '  - path: /stripe',
    '    provider: stripe',
    '    secrets: ["${STRIPE_SECRET}"]',
    '    forward:',
    `      url: ${receiver.url}/hooks`,
    '      secret: ${FORWARD_SECRET}',
    ''
  ].join('\n'))
  const env = { REDIS_URL: redis.url, ANVIL_CONFIG: config, FORWARD_SECRET, ANVIL_QUEUE: 'cli-forward', HOST: '127.0.0.1' }
  const serve = startCli(t, ['serve'], { env: { ...env, STRIPE_SECRET, PORT: '0' } })
  const port = await serve.listeningPort('anvil serve: listening')
  // The worker verifies nothing: it is given the forward secret only, never the provider's. Its allowlist opens
  // the SSRF guard for the forward URL alone: an endpoint a customer registered on the same network stays refused.
  const outbound = createOutbound({ database: db.url, redis: redis.url })
  t.teardown(async () => await outbound.close())
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/customer` })
  const worker = startCli(t, ['worker'], { env: { ...env, PORT: '0', ANVIL_FORWARD_ALLOW_NETS: '127.0.0.0/8', ANVIL_DATABASE_URL: db.url } })
  await worker.log('anvil worker: started')
  const { messageId } = await outbound.publish({ type: 'order.paid', data: { total: 5 } })
  // Its row is written `started` before the connection is tried: wait for it to be completed.
  const attempts = await eventually('the attempt to be answered', async () => {
    const rows = await db.query<{ error_class: string | null }>("SELECT error_class FROM anvil.deliveries WHERE message_id = $1 AND endpoint_id = $2 AND status <> 'started'", [messageId, endpoint.id])
    return rows.length > 0 && rows
  })
  t.match(attempts, [{ error_class: 'ssrf' }], 'ANVIL_FORWARD_ALLOW_NETS does not open the guard for endpoints')

  const event = { id: 'evt_cli_forward', object: 'event', type: 'customer.created', data: { object: { id: 'cus_1' } } }
  const signed = signRequest('stripe', { body: event, secret: STRIPE_SECRET })
  const response = await fetch(`http://127.0.0.1:${port}/stripe`, { method: 'POST', headers: signed.headers, body: signed.body })
  t.equal(response.status, 202)
  await receiver.waitFor(1)
  t.same(verified, [{ event, id: 'evt_cli_forward', type: 'customer.created' }])
  t.notOk(worker.output.includes(FORWARD_SECRET) || serve.output.includes(FORWARD_SECRET), 'the forward secret is never printed')
  t.equal(receiver.received.filter((request) => request.url === '/customer').length, 0, 'the endpoint was never reached')
  t.equal(await worker.stop('SIGTERM'), 0)
  t.equal(await serve.stop('SIGTERM'), 0)
})

// `anvil worker` with neither --handler, a forwarding source nor a database: test/cli/config.test.ts ('worker without --handler').

t.test('a bad allowlist or forward is refused before anything starts', async (t) => {
  const nets = await runCli(['worker'], { env: { REDIS_URL: redis.url, ANVIL_OUTBOUND_ALLOW_NETS: '10.0.0.0/40' } })
  t.equal(nets.code, 1)
  t.match(nets.stderr, /ANVIL_OUTBOUND_ALLOW_NETS must be comma-separated networks/)
  const dir = tempDir(t)
  const config = join(dir, 'sources.json')
  writeFileSync(config, JSON.stringify({ sources: [{ path: '/s', provider: 'stripe', secrets: [STRIPE_SECRET], forward: { url: 'https://user:pw@example.com/', secret: FORWARD_SECRET } }] }))
  const forward = await runCli(['worker'], { env: { REDIS_URL: redis.url, ANVIL_CONFIG: config } })
  t.equal(forward.code, 1)
  t.match(forward.stderr, /sources\.0\.forward\.url must not carry credentials/)
  t.notOk(forward.stderr.includes(FORWARD_SECRET))
})

t.test('the worker reads only the forward secrets of its sources file; serve still needs every source secret', async (t) => {
  const { loadServeConfig, loadWorkerConfig } = await import('../../cli/config/load-config.js')
  const dir = tempDir(t)
  const config = join(dir, 'sources.yaml')
  writeFileSync(config, JSON.stringify({ sources: [
    { name: 'stripe', path: '/s', provider: 'stripe', secrets: ['${STRIPE_SECRET}'], forward: { url: 'https://billing.example.com/hooks', secret: '${FORWARD_SECRET}' } },
    { name: 'github', path: '/g', provider: 'github', secrets: ['${GITHUB_SECRET}'] }
  ] }))
  const worker = loadWorkerConfig({ ANVIL_CONFIG: config, FORWARD_SECRET })
  t.match(worker.sources, [{ name: 'stripe', forward: { url: 'https://billing.example.com/hooks', secret: FORWARD_SECRET } }, { name: 'github' }])
  t.same(worker.sources?.map((source) => source.secrets), [['${STRIPE_SECRET}'], ['${GITHUB_SECRET}']], 'the sources\' secrets are left unread')
  t.throws(() => loadWorkerConfig({ ANVIL_CONFIG: config, STRIPE_SECRET }), /sources\.0\.forward\.secret names \$\{FORWARD_SECRET\}, which is not set/)
  t.throws(() => loadWorkerConfig({ ANVIL_CONFIG: config, FORWARD_SECRET: 'whsec_c2hvcnQ=' }), /sources\.0\.forward\.secret must hold at least 16 bytes/, 'the forward secret is still checked')
  t.throws(() => loadServeConfig({ ANVIL_CONFIG: config, FORWARD_SECRET, STRIPE_SECRET }), /sources\.1\.secrets\.0 names \$\{GITHUB_SECRET\}, which is not set/, 'serve verifies: it reads them all')
})

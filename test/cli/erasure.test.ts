/**
 * `anvil subjects erase` and `anvil tenants delete` straight to PostgreSQL and Redis: messages of two subjects and
 * two tenants, dispatched (their delivery jobs wait in Redis: no worker runs). Without --yes nothing goes; with it the
 * counts are printed, the rows and jobs are gone, the audit says `cli`; a second run prints zeros and exits 0. Through
 * `anvil serve`'s admin API (--url) the same, audited as the admin token.
 */
import t from 'tap'
import { createOutbound } from '../../src/outbox/outbound.js'
import { adminTokenActor, subjectTarget } from '../../src/erasure/erasure-audit.js'
import { ROOT, runCli, startCli } from '../helpers/cli.js'
import { addJob, jobData, openQueue } from '../helpers/journal.js'
import { eventually } from '../helpers/eventually.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const outbound = beforeAll(t, async () => createOutbound({ database: db.url, redis: redis.url }), async (outbound) => await outbound.close())
const env = beforeAll(t, async () => ({ REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url }))

const rows = async (sql: string, params: unknown[] = []): Promise<number> => (await db.query(sql, params)).length
const jobs = async (ids: string[]): Promise<number> =>
  ((await redis.command('keys', '*:outbound:msg_*')) as string[]).filter((key) => ids.some((id) => key.includes(`:${id}.`)) && !key.endsWith(':logs')).length
const json = (stdout: string): Record<string, any> => JSON.parse(stdout)

t.test('a subject erased and a tenant removed through the CLI: --yes required, counts printed, audited as cli, idempotent', async (t) => {
  await outbound.endpoints.create({ url: 'https://acme.example/hook', tenant: 'acme' })
  await outbound.endpoints.create({ url: 'https://globex.example/hook', tenant: 'globex' })
  const alice1 = (await outbound.publish({ type: 'user.updated', data: { name: 'alice' }, tenant: 'acme', subject: 'user_alice' })).messageId
  const alice2 = (await outbound.publish({ type: 'user.updated', data: { name: 'alice' }, tenant: 'globex', subject: 'user_alice' })).messageId
  const bob = (await outbound.publish({ type: 'user.updated', data: { name: 'bob' }, tenant: 'acme', subject: 'user_bob' })).messageId
  await outbound.dispatcher.dispatchOnce()
  t.equal(await jobs([alice1, alice2, bob]), 3, 'a delivery job each, waiting in Redis')

  const refused = await runCli(['subjects', 'erase', 'user_alice'], { env })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /^anvil: this erases every message and event of subject "user_alice" for good: pass --yes to do it \(nothing was erased\)\n$/)
  t.equal(await rows('SELECT 1 FROM anvil.outbox WHERE subject = $1', ['user_alice']), 2, 'nothing erased without --yes')
  t.equal(await rows('SELECT 1 FROM anvil.erasure_audit'), 0, 'nor audited')

  const erased = await runCli(['subjects', 'erase', 'user_alice', '--yes'], { env })
  t.equal(erased.code, 0, erased.stderr)
  t.match(json(erased.stdout), { subject: 'user_alice', messages: 2, pendingMessages: 0, jobs: 2, events: 0, audit: { action: 'subject', target: subjectTarget('user_alice'), actor: 'cli' } })
  t.match(erased.stderr, /^erased: messages 2, pendingMessages 0, deliveries 0, jobs 2, jobsInFlight 0, events 0, eventAttempts 0, eventJobs 0 \(audit \S+, actor cli\)\n$/)
  t.equal(await rows('SELECT 1 FROM anvil.outbox WHERE id = ANY ($1)', [[alice1, alice2]]), 0, 'her messages are gone')
  t.equal(await jobs([alice1, alice2]), 0, 'and their jobs')
  t.equal(await jobs([bob]), 1, "bob's job stays")
  // Again with Redis too busy to answer (stopped) until the command says it waits: it waits, it does not fail.
  redis.pause()
  const waiting = startCli(t, ['subjects', 'erase', 'user_alice', '--yes'], { env })
  try {
    await eventually('the command to wait for Redis, or exit', () => waiting.child.exitCode !== null || waiting.stderr.includes('anvil: waiting for Redis'))
  } finally {
    redis.resume()
  }
  t.equal(await waiting.exited, 0, waiting.stderr)
  t.match(waiting.stderr, /^anvil: waiting for Redis \(redis:\/\/127\.0\.0\.1:\d+\) to answer\n/, 'said once, while it waited')
  t.match(json(waiting.lines.join('\n')), { messages: 0, jobs: 0, events: 0, audit: { actor: 'cli' } }, 'a second run: zeros')

  const refusedTenant = await runCli(['tenants', 'delete', 'acme'], { env })
  t.equal(refusedTenant.code, 1)
  t.match(refusedTenant.stderr, /pass --yes to do it \(nothing was erased\)\n$/)
  t.equal(await rows("SELECT 1 FROM anvil.endpoints WHERE tenant = 'acme'"), 1, 'nothing removed without --yes')
  const removed = await runCli(['tenants', 'delete', 'acme', '--yes'], { env })
  t.equal(removed.code, 0, removed.stderr)
  t.match(json(removed.stdout), { tenant: 'acme', endpoints: 1, messages: 1, jobs: 1, audit: { action: 'tenant', target: 'acme', actor: 'cli' } })
  t.equal(await rows("SELECT 1 FROM anvil.endpoints WHERE tenant = 'acme'"), 0, "acme's endpoint is gone")
  t.equal(await rows('SELECT 1 FROM anvil.outbox WHERE id = $1', [bob]), 0, 'with its message')
  t.equal(await jobs([bob]), 0, 'and its job')
  t.equal(await rows("SELECT 1 FROM anvil.endpoints WHERE tenant = 'globex'"), 1, 'globex stays')
  const twice = await runCli(['tenants', 'delete', 'acme', '--yes'], { env })
  t.equal(twice.code, 0, twice.stderr)
  t.match(json(twice.stdout), { endpoints: 0, messages: 0, jobs: 0 }, 'a second run: zeros')

  t.same((await db.query<{ action: string, actor: string }>('SELECT action, actor FROM anvil.erasure_audit ORDER BY at, id')).map((row) => `${row.action} ${row.actor}`),
    ['subject cli', 'subject cli', 'tenant cli', 'tenant cli'], 'each run audited, as cli')
})

t.test('through the admin API (--url): the server erases, and audits the token, not cli', async (t) => {
  const token = 'admin-token-for-cli-erasure'
  const serve = startCli(t, ['serve'], { env: { ...env, WEBHOOK_SECRET: 'whsec_cli_erasure_0123456789', ANVIL_ADMIN_TOKEN: token, HOST: '127.0.0.1', PORT: '0' } })
  const url = `http://127.0.0.1:${await serve.listeningPort('anvil serve: listening')}/admin`
  const carol = (await outbound.publish({ type: 'user.updated', data: { name: 'carol' }, tenant: 'globex', subject: 'user_carol' })).messageId
  await outbound.dispatcher.dispatchOnce()
  const api = { ...env, ANVIL_ADMIN_TOKEN: token }
  const refused = await runCli(['subjects', 'erase', 'user_carol', '--url', url], { env: api })
  t.equal(refused.code, 1)
  t.equal(await rows('SELECT 1 FROM anvil.outbox WHERE id = $1', [carol]), 1, 'nothing erased without --yes')
  const erased = await runCli(['subjects', 'erase', 'user_carol', '--yes', '--url', url], { env: api })
  t.equal(erased.code, 0, erased.stderr)
  t.match(json(erased.stdout), { subject: 'user_carol', messages: 1, jobs: 1, audit: { action: 'subject', actor: adminTokenActor(token) } })
  t.equal(await rows('SELECT 1 FROM anvil.outbox WHERE id = $1', [carol]), 0)
  t.equal(await jobs([carol]), 0)
  const removed = await runCli(['tenants', 'delete', 'globex', '--yes', '--url', url], { env: api })
  t.equal(removed.code, 0, removed.stderr)
  t.match(json(removed.stdout), { tenant: 'globex', endpoints: 1, audit: { action: 'tenant', actor: adminTokenActor(token) } })
  t.equal(await rows("SELECT 1 FROM anvil.endpoints WHERE tenant = 'globex'"), 0)
  t.equal(await serve.stop(), 0)
})

t.test('anvil worker tags journal events by ANVIL_JOURNAL_SUBJECT_PATH; anvil subjects erase deletes them', async (t) => {
  const queueName = 'cli-erasure'
  const worker = startCli(t, ['worker', '--handler', 'examples/handler.js'], {
    cwd: ROOT, env: { ...env, ANVIL_QUEUE: queueName, ANVIL_JOURNAL_SUBJECT_PATH: 'data.object.customer', HOST: '127.0.0.1', PORT: '0' }
  })
  await worker.log('anvil worker: started')
  const queue = openQueue(redis.url, queueName)
  t.teardown(async () => await queue.close())
  await addJob(queue, jobData({ body: { id: 'evt_dave', type: 'invoice.paid', data: { object: { customer: 'cus_dave' } } } }))
  await addJob(queue, jobData({ body: { id: 'evt_erin', type: 'invoice.paid', data: { object: { customer: 'cus_erin' } } } }))
  await eventually('both events journaled with their subject', async () => (await db.query('SELECT 1 FROM anvil.webhook_events WHERE subject = ANY ($1)', [['cus_dave', 'cus_erin']])).length === 2)
  const erased = await runCli(['subjects', 'erase', 'cus_dave', '--yes'], { env: { ...env, ANVIL_QUEUE: queueName } })
  t.equal(erased.code, 0, erased.stderr)
  t.match(json(erased.stdout), { subject: 'cus_dave', events: 1, messages: 0, audit: { actor: 'cli' } })
  t.equal(await rows("SELECT 1 FROM anvil.webhook_events WHERE subject = 'cus_dave'"), 0, "dave's event is gone")
  t.equal(await rows("SELECT 1 FROM anvil.webhook_events WHERE subject = 'cus_erin'"), 1, "erin's stays")
  t.equal(await worker.stop(), 0)
})

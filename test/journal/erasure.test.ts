/**
 * Erasure in the inbound journal, through the admin API over real HTTP on real PostgreSQL and Redis: events tagged
 * by the journal's `subjectPath` or by the handler's `event.subject(…)` (which wins), one of them dead with its dead
 * letter in Redis. `DELETE /admin/subjects/:subject` deletes the subject's events, their attempt log and effects and
 * removes their jobs and dead letters; another subject's events stay; a second call answers zeros; it is audited in
 * the journal's database when there are no outgoing webhooks.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { AddressInfo } from 'node:net'
import { addJob, jobData, openQueue, journalFixture } from '../helpers/journal.js'
import anvilAdmin from '../../plugins/admin/admin.js'
import { journalAdminRoutes } from '../../plugins/journal/admin-routes.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { createWorker } from '../../src/worker/worker.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-0123456789'
const { redis, db } = journalFixture(t)
const queueName = 'erasure'

async function call (app: ReturnType<typeof Fastify>, method: string, path: string): Promise<{ status: number, body: any }> {
  const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/admin${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } })
  return { status: res.status, body: await res.json() }
}

t.test('a subject\'s events, tagged by path or by the handler, go with their attempt log, effects, jobs and dead letters', async (t) => {
  const worker = createWorker(async (event) => {
    await event.once?.('charge', () => ({ charged: true }))
    if (event.eventType === 'user.merged') event.subject?.('user_alice')
    if (event.eventType === 'invoice.payment_failed') throw new TypeError('cannot read amount')
  }, { redis: redis.url, queueName, sweepIntervalMs: 0, journal: { database: db.url, subjectPath: 'data.customer' } })
  const queue = openQueue(redis.url, queueName)
  t.teardown(async () => {
    await worker.close()
    await queue.close()
  })
  await worker.start()
  const alice = { data: { customer: 'user_alice' } }
  const bob = { data: { customer: 'user_bob' } }
  const jobs = [
    await addJob(queue, jobData({ eventId: 'evt_path', body: alice })),
    await addJob(queue, jobData({ eventId: 'evt_handler', eventType: 'user.merged', body: bob })),
    await addJob(queue, jobData({ eventId: 'evt_dead', eventType: 'invoice.payment_failed', body: alice }))
  ]
  await addJob(queue, jobData({ eventId: 'evt_bob', body: bob }))
  await eventually('every event has its outcome', async () => (await db.query("SELECT 1 FROM anvil.webhook_events WHERE status IN ('done', 'dead')")).length === 4)
  t.same(await db.query('SELECT id, subject FROM anvil.webhook_events ORDER BY id'), [
    { id: 'evt_bob', subject: 'user_bob' }, { id: 'evt_dead', subject: 'user_alice' }, { id: 'evt_handler', subject: 'user_alice' }, { id: 'evt_path', subject: 'user_alice' }
  ], 'the path tags each event, the handler\'s subject wins over it')
  const redisKeys = async (): Promise<string[]> => (await redis.command('keys', '*') as string[]).filter((key) => jobs.some((job) => key.endsWith(`:${job}`) || key.endsWith(`:d_${job}`)))
  await eventually('the dead letter is in Redis', async () => (await redisKeys()).some((key) => key.includes(':d_')))

  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, routes: [journalAdminRoutes(openEventLog({ redis: redis.url, database: db.url, queueName }))] })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => await app.close())

  const erased = await call(app, 'DELETE', '/subjects/user_alice')
  t.equal(erased.status, 200)
  t.match(erased.body, { subject: 'user_alice', messages: 0, events: 3, eventAttempts: 1 })
  t.ok(erased.body.eventJobs >= 1, 'the dead letter at least (finished jobs too, while BullMQ keeps them)')
  t.same(await redisKeys(), [], 'no job or dead letter of those events is left in Redis')
  t.same(await db.query('SELECT id FROM anvil.webhook_events'), [{ id: 'evt_bob' }], 'bob\'s event stays')
  t.same(await db.query("SELECT 1 FROM anvil.webhook_event_failures WHERE event_id <> 'evt_bob'"), [], 'the attempt log of alice\'s events is gone')
  t.same(await db.query("SELECT event_id FROM anvil.webhook_effects ORDER BY event_id"), [{ event_id: 'evt_bob' }], 'so are their effects')
  const again = await call(app, 'DELETE', '/subjects/user_alice')
  t.match(again, { status: 200, body: { events: 0, eventAttempts: 0, eventJobs: 0 } }, 'a second call: zeros')
  const audit = await call(app, 'GET', '/audit')
  t.match(audit.body.items.map((entry: any) => [entry.action, entry.counts.events]), [['subject', 0], ['subject', 3]], 'audited in the journal\'s database')
})

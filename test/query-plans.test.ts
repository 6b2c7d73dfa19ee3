/**
 * The outbox's and the journal's hot queries read indexes: on a seeded outbox and journal
 * (test/fixtures/outbox-seed.sql, journal-seed.sql, analyzed, large enough that the planner picks a sequential
 * scan where no index serves), no plan scans the outbox, the delivery log or the journal whole. Dropping an index the plan relies on brings the scan back, so each assertion can fail.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t from 'tap'
import { migrate, migrationsDir } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/database.js'
import { createDeliveryLog } from '../src/delivery-log/delivery-log.js'
import { createDeliveryStore } from '../src/delivery-log/delivery-store.js'
import * as deliveries from '../src/sql/deliveries.js'
import * as outbox from '../src/sql/outbox.js'
import * as deliveryStats from '../src/sql/delivery-stats.js'
import * as endpointsSql from '../src/sql/endpoints.js'
import * as webhookEffects from '../src/sql/webhook-effects.js'
import * as webhookEvents from '../src/sql/webhook-events.js'
import { listQuery } from '../src/event-log/event-queries.js'
import { resolveFilter } from '../src/event-log/event-filter.js'
import { encodeCursor } from '../src/paging/cursor.js'
import { TestDatabase } from './helpers/pg.js'
import { ROOT_URL } from './helpers/root.js'
import { beforeAll, beforeStep } from './helpers/before-all.js'

const ROWS = 20_000
const SCHEMA = 'anvil'
const DAY = 86_400

const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
beforeStep(t, async () => {
  for (const seed of ['outbox-seed.sql', 'journal-seed.sql']) {
    await db.query(readFileSync(new URL(`./fixtures/${seed}`, ROOT_URL + 'test/'), 'utf8')
      .replaceAll('{{schema}}', pg.escapeIdentifier(SCHEMA)).replaceAll('{{rows}}', String(ROWS)))
  }
})
const client = beforeAll(t, async () => {
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  return client
}, async (client) => await client.end())
// As autovacuum leaves a table that has had its writes: the visibility map set, so index-only scans are priced as such.
beforeStep(t, async () => await client.query(`VACUUM ANALYZE ${SCHEMA}.outbox, ${SCHEMA}.deliveries, ${SCHEMA}.webhook_events, ${SCHEMA}.webhook_effects,
  ${SCHEMA}.webhook_event_failures`))

/**
 * Each day's index of the delivery log (named by PostgreSQL after its columns) by the name of the index it is a
 * partition of (migration 0028), so the assertions name the indexes of the migrations.
 */
const dayIndexes = beforeAll(t, async () => (await client.query<{ child: string, parent: string }>(
  `SELECT c.relname AS child, p.relname AS parent FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
   WHERE c.relkind = 'i' AND p.relname LIKE 'deliveries%' ORDER BY length(c.relname) DESC`)).rows, async () => {})
const plan = async (text: string, values: unknown[]): Promise<string> => {
  const found = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values)).rows.map((row) => row['QUERY PLAN']).join('\n')
  return dayIndexes.reduce((named, { child, parent }) => named.replaceAll(` ${child} `, ` ${parent} `), found)
}
/** A table, or a day of a table partitioned by day (the DEFAULT partition, empty, may be read whole). */
const WHOLE_TABLE = /Seq Scan on (outbox|deliveries|webhook_events|webhook_effects|webhook_event_failures)(_\d{8})?\b/
const events = (filter: unknown, cursor?: string): [string, unknown[]] => {
  const { text, values } = listQuery(SCHEMA, resolveFilter(filter), { limit: 50, cursor })
  return [text, values]
}

/** Each hot statement with the parameters it runs with, and the indexes that bound its cost; `tenDaysAgo` as PostgreSQL writes it. */
const hotQueries = (tenDaysAgo: string): Array<[string, string, unknown[], RegExp[]]> => [
  ['undelivered, first page', deliveries.undelivered(SCHEMA), [null, null, 51], [/deliveries_unresolved/, /deliveries_message/, /deliveries_pkey/]],
  ['undelivered of one endpoint', deliveries.undelivered(SCHEMA), ['ep_2', null, 51], [/deliveries_endpoint_unresolved/]],
  ['undelivered of an endpoint with none', deliveries.undelivered(SCHEMA), ['ep_42', null, 51], [/deliveries_endpoint_unresolved/]],
  ['undelivered, a later page', deliveries.undelivered(SCHEMA), [null, ROWS, 51], [/deliveries_unresolved/]],
  ['recover: what an endpoint failed since', deliveries.failedSince(SCHEMA), ['ep_2', new Date(Date.now() - 10 * DAY * 1000).toISOString()],
    [/deliveries_endpoint_unresolved/]],
  ['a portal token\'s deliveries: each of its tenant\'s endpoints by its index', deliveries.listOfTenant(SCHEMA), [null, null, null, null, 51, 't3'], [/deliveries_endpoint/]],
  ['a portal token\'s deliveries, a tenant with none', deliveries.listOfTenant(SCHEMA), [null, null, null, null, 51, 'nobody'], [/deliveries_endpoint/]],
  ['re-send by filter, both kinds', outbox.failedPage(SCHEMA), [null, null, null, null, null, null, null, 51], [/outbox_failed/, /deliveries_undelivered_created/, /outbox_pkey/]],
  ['re-send by filter, failed deliveries of a tenant, a later page', outbox.failedPage(SCHEMA),
    [null, 't3', null, null, new Date(Date.now() - 10 * DAY * 1000).toISOString(), 'msg_0', 'delivery', 51], [/deliveries_undelivered_tenant/, /outbox_pkey/]],
  ['re-send by filter, failed deliveries of a type', outbox.failedPage(SCHEMA), ['order.paid', null, null, null, null, null, 'delivery', 51],
    [/deliveries_undelivered_(type|created)/]],
  ['re-send by filter, a type no message has', outbox.failedPage(SCHEMA), ['no.such.type', null, null, null, null, null, null, 51],
    [/deliveries_undelivered_type/, /outbox_failed_type/]],
  ['re-send by filter, failed dispatches of a tenant', outbox.failedPage(SCHEMA), [null, 't3', null, null, null, null, 'dispatch', 51],
    [/outbox_failed_tenant/]],
  // Fair between tenants: a skip scan of the tenants with pending messages, each one's oldest by the same index, each row locked by its key.
  ['the dispatcher\'s claim', outbox.claim(SCHEMA), ['plan', 60_000, 100, ''], [/outbox_tenant_due/, /outbox_pkey/]],
  ['the dispatcher\'s claim, past a cursor', outbox.claim(SCHEMA), ['plan', 60_000, 100, 't3'], [/outbox_tenant_due/, /outbox_pkey/]],
  ['outbox stats', outbox.stats(SCHEMA), [], [/outbox_pending_created/, /outbox_failed/]],
  ['the portal\'s endpoint list: a day of each listed endpoint', deliveryStats.summaries(SCHEMA), [['ep_1', 'ep_2', 'ep_42'], tenDaysAgo, 't2'],
    [/Index Only Scan using deliveries_endpoint_created/]],
  ['an endpoint\'s outcomes by the hour', deliveryStats.buckets(SCHEMA), ['ep_2', tenDaysAgo, 3600], [/Index Only Scan using deliveries_endpoint_created/]],
  ['an endpoint\'s p50', deliveryStats.p50(SCHEMA), ['ep_2', tenDaysAgo], [/Index Only Scan using deliveries_endpoint_created/]],
  ['retention: idle messages with their log', outbox.deleteIdle(SCHEMA), [30 * DAY, 1000], [/outbox_finished/, /deliveries_message/, /outbox_pkey/]],
  // In each day since the message, by the pair or by the endpoint's unresolved attempts (a day holds few).
  ['a success resolves its pair', deliveries.resolvePair(SCHEMA), ['msg_7', 'ep_2'], [/deliveries_(message|endpoint_unresolved)/]],
  // Each day's time index backwards, merged: the first rows of the newest days end it.
  ['events, first page', ...events({}), [/Merge Append/, /webhook_events_\d{8}_received_at_id_idx/]],
  ['events, a later page', ...events({}, encodeCursor([tenDaysAgo, 'evt_9'])),
    [/webhook_events_\d{8}_received_at_id_idx/]],
  // The planner walks the time index backwards and filters while the statuses are common, their own index when rare.
  ['events of a status', ...events({ status: 'failed,dead' }), [/webhook_events_\d{8}_(status_received_at|received_at_id)_idx/]],
  ['an event by id: each day\'s key', webhookEvents.detail(SCHEMA), ['evt_77'], [/webhook_events_\d{8}_pkey/]],
  ['effects retention batch', webhookEffects.deleteCreatedBefore(SCHEMA), [new Date(Date.now() - 30 * DAY * 1000), 1000], [/webhook_effects_created_at/, /webhook_effects_pkey/]]
]

t.test('no hot query scans the outbox, the delivery log or the journal whole; each reads the indexes that bound it', async (t) => {
  const tenDaysAgo = (await client.query<{ at: string }>("SELECT (now() - interval '10 days')::text AS at")).rows[0]?.at ?? ''
  // Days of a few pages (ahead, empty; today's first hours; the seed's oldest), read whole, cost what their index would.
  const small = (await client.query<{ name: string }>(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = '${SCHEMA}.deliveries'::regclass AND c.relpages < 8`)).rows.map((row) => row.name)
  const days = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = '${SCHEMA}.deliveries'::regclass`)).rows[0]?.n ?? 0
  t.ok(small.length <= 5, `a few small days only (${small.join(', ')}) of ${days}`)
  // The seed's days are a few dozen pages, where reading one whole or by its index is the planner's coin toss (it
  // depends on the hour the seed ran). Priced out, a Seq Scan is planned only where no index can serve the query.
  await client.query('SET enable_seqscan = off')
  t.teardown(async () => { await client.query('RESET enable_seqscan') })
  for (const [name, text, values, indexes] of hotQueries(tenDaysAgo)) {
    const found = (await plan(text, values)).split('\n').filter((line) => !small.some((day) => line.includes(`Seq Scan on ${day} `))).join('\n')
    t.notMatch(found, WHOLE_TABLE, name)
    for (const index of indexes) t.match(found, index, `${name}: ${index.source}`)
  }
})

t.test('the journal\'s stats read the days of their window only', async (t) => {
  const found = await plan(webhookEvents.stats(SCHEMA), [new Date(Date.now() - DAY * 1000)])
  const day = (ago: number): string => new Date(Date.now() - ago * DAY * 1000).toISOString().slice(0, 10).replaceAll('-', '')
  t.match(found, new RegExp(`webhook_events_${day(0)}`), 'today')
  t.notMatch(found, new RegExp(`webhook_events_${day(3)}`), 'not the days before the window: pruned')
})

interface PlanNode { 'Relation Name'?: string, 'Actual Rows'?: number, 'Actual Loops'?: number, 'Rows Removed by Filter'?: number, Plans?: PlanNode[] }
/**
 * The days of the delivery log (migration 0028) a statement read as it ran: a day pruned when planned is not in the
 * plan, one pruned as it ran is never executed. Run in a transaction rolled back, so a write changes nothing.
 */
async function daysRead (text: string, values: unknown[]): Promise<string[]> {
  await client.query('BEGIN')
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values)
    const days = new Set<string>()
    const walk = (node: PlanNode): void => {
      const name = node['Relation Name'] ?? ''
      if (/^deliveries_\d{8}$/.test(name) && (node['Actual Loops'] ?? 0) > 0) days.add(name)
      for (const child of node.Plans ?? []) walk(child)
    }
    walk(rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode)
    return [...days].sort()
  } finally {
    await client.query('ROLLBACK')
  }
}
const dayOf = (at: Date): string => `deliveries_${at.toISOString().slice(0, 10).replaceAll('-', '')}`

t.test('the delivery log is read in the days a statement names, not in all of them', async (t) => {
  const all = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = '${SCHEMA}.deliveries'::regclass`)).rows[0]?.n ?? 0
  t.ok(all > 60, `the seed's log has ${all} days`)
  const row = async (message: string): Promise<{ id: string, created_at: Date, message_created_at: Date }> =>
    (await client.query(`SELECT id, created_at, message_created_at FROM ${SCHEMA}.deliveries WHERE message_id = $1 ORDER BY id LIMIT 1`, [message])).rows[0]
  const old = await row(`msg_${ROWS / 2}`)
  const recent = await row(`msg_${ROWS - 1000}`)
  const after = (day: string) => (days: string[]): boolean => days.every((read) => read >= day)
  const tenDaysAgo = new Date(Date.now() - 10 * DAY * 1000)
  const cases: Array<[string, string, unknown[], (days: string[]) => boolean]> = [
    ['an attempt by id (GET /admin/deliveries/:id)', deliveries.byId(SCHEMA), [old.id], (days) => days.join() === dayOf(old.created_at)],
    ['an attempt\'s outcome, by the id its job holds', deliveries.complete(SCHEMA), [old.id, 'failed', 500, 1, null, null, null, null, null],
      (days) => days.join() === dayOf(old.created_at)],
    ['a stall accounted for, by id', deliveries.accountStalls(SCHEMA), [old.id, 1], (days) => days.join() === dayOf(old.created_at)],
    ['the undelivered pair of a row, by id', `SELECT 1 FROM ${SCHEMA}.deliveries d WHERE ${deliveries.keyed(SCHEMA, '$1', 'd.')}`, [recent.id],
      (days) => days.join() === dayOf(recent.created_at)],
    ['the list, a later page: no day after its cursor', deliveries.list(SCHEMA), [null, null, null, old.id, 51], (days) => days.every((read) => read <= dayOf(old.created_at))],
    ['the list since a time: no day before it', deliveries.list(SCHEMA), [null, null, tenDaysAgo, null, 51], after(dayOf(tenDaysAgo))],
    ['a tenant\'s list since a time', deliveries.listOfTenant(SCHEMA), [null, null, tenDaysAgo, null, 51, 't3'], after(dayOf(tenDaysAgo))],
    ['a message\'s attempts: the days since it was made', deliveries.ofMessage(SCHEMA), [`msg_${ROWS - 1000}`], after(dayOf(recent.message_created_at))],
    ['a success resolves its pair in the days since its message', deliveries.resolvePair(SCHEMA), [`msg_${ROWS - 1000}`, 'ep_2'], after(dayOf(recent.message_created_at))],
    ['a resumed job\'s rows', deliveries.ofJob(SCHEMA), [`msg_${ROWS - 1000}`, 'ep_2', 'job'], after(dayOf(recent.message_created_at))],
    ['a re-send\'s targets', endpointsSql.resendTargets(SCHEMA), [`msg_${ROWS - 1000}`, 't0', 'order.paid', null], after(dayOf(recent.message_created_at))],
    ['recover since a time', deliveries.failedSince(SCHEMA), ['ep_2', tenDaysAgo], after(dayOf(tenDaysAgo))],
    ['re-send by filter, a later page', outbox.failedPage(SCHEMA), [null, null, null, null, tenDaysAgo, 'msg_0', 'delivery', 51], after(dayOf(tenDaysAgo))],
    ['the portal\'s endpoint list, a day', deliveryStats.summaries(SCHEMA), [['ep_1', 'ep_2'], tenDaysAgo, null], after(dayOf(tenDaysAgo))],
    ['an endpoint\'s outcomes by the hour', deliveryStats.buckets(SCHEMA), ['ep_2', tenDaysAgo, 3600], after(dayOf(tenDaysAgo))],
    ['an endpoint\'s p50', deliveryStats.p50(SCHEMA), ['ep_2', tenDaysAgo], after(dayOf(tenDaysAgo))],
    ['retention: a message\'s recent attempts, the days since the cutoff', outbox.deleteIdle(SCHEMA), [30 * DAY, 1000], after(dayOf(new Date(Date.now() - 30 * DAY * 1000))) ]
  ]
  for (const [name, text, values, holds] of cases) {
    const days = await daysRead(text, values)
    t.ok(days.length < all && holds(days), `${name}: read ${days.length} of ${all} days (${days[0] ?? 'none'} to ${days.at(-1) ?? 'none'})`)
  }
  // A lookup by id without the window its id says reads every day: the assertions above can fail.
  t.equal((await daysRead(`SELECT * FROM ${SCHEMA}.deliveries WHERE id = $1`, [old.id])).length, all - 1, 'by id alone, every day but the DEFAULT partition')
})

/** The rows a statement read of `table` as it ran (EXPLAIN ANALYZE): those its scans returned and those they filtered out. */
async function rowsRead (table: string, text: string, values: unknown[]): Promise<{ read: number, returned: number }> {
  const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values)
  const top = rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode
  const walk = (node: PlanNode): number => (node['Relation Name'] === table || new RegExp(`^${table}_(\\d{8}|default)$`).test(node['Relation Name'] ?? '')
    ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1)
    : 0) + (node.Plans ?? []).reduce((sum, child) => sum + walk(child), 0)
  return { read: walk(top), returned: top['Actual Rows'] ?? 0 }
}
const resendPage = (type: string | null, tenant: string | null, after: [string, string] | [null, null] = [null, null]): unknown[] =>
  [type, tenant, null, null, after[0], after[1], 'delivery', 51]
/** The seed's undelivered messages (n % 100 = 7, all of tenant t7) have two failed attempts each. */
const PER_MESSAGE = 2

t.test('re-send by filter: a page reads the failures of the messages it returns, and a filter that matches nothing reads none', async (t) => {
  const unresolved = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${SCHEMA}.deliveries WHERE status = 'failed' AND NOT resolved`)).rows[0]?.n)
  t.ok(unresolved > 3 * PER_MESSAGE * 51, `the seed's backlog (${unresolved} failures) is several pages`)
  // The log is partitioned by day (migration 0028): each day's index is merged, so a page also reads a row or two of
  // each day it passes (the seed's days hold a few dozen failures each: a day may be walked by time and filtered).
  const days = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = '${SCHEMA}.deliveries'::regclass`)).rows[0]?.n ?? 0
  const slack = 2 * days
  const first = await rowsRead('deliveries', outbox.failedPage(SCHEMA), resendPage(null, null))
  t.equal(first.returned, 51, 'a full page (the limit and one to tell there is more)')
  t.ok(first.read <= PER_MESSAGE * 52 + slack, `the first page read ${first.read} failures, those of its messages`)
  const last = (await client.query<{ id: string, at: string }>(outbox.failedPage(SCHEMA), resendPage(null, null))).rows[49] as { id: string, at: string }
  const second = await rowsRead('deliveries', outbox.failedPage(SCHEMA), resendPage(null, null, [last.at, last.id]))
  t.ok(second.returned === 51 && second.read <= PER_MESSAGE * 52 + slack, `a later page read ${second.read}`)
  t.ok((await rowsRead('deliveries', outbox.failedPage(SCHEMA), resendPage(null, 't7'))).read <= PER_MESSAGE * 52 + slack, 'a tenant\'s page')
  for (const [what, values] of [['a tenant with no failure', resendPage(null, 't3')], ['a type no message has', resendPage('no.such.type', null)],
    ['a tenant no message has', resendPage(null, 'nobody')], ['a window with no failure', ['order.paid', null, new Date(Date.now() + DAY * 1000).toISOString(), null, null, null, 'delivery', 51]]] as const) {
    const none = await rowsRead('deliveries', outbox.failedPage(SCHEMA), [...values])
    t.ok(none.returned === 0 && none.read <= slack, `${what}: read ${none.read}`)
  }
  for (const [what, values] of [['both kinds, a type no message has', ['no.such.type', null, null, null, null, null, null, 51]],
    ['both kinds, a tenant no message has', [null, 'nobody', null, null, null, null, null, 51]]] as const) {
    t.same(await rowsRead('outbox', outbox.failedPage(SCHEMA), [...values]), { read: 0, returned: 0 }, `${what}: no failed dispatch read either`)
  }
  // The same filter without its index reads the whole backlog: the assertion above can fail.
  await client.query('BEGIN')
  t.teardown(async () => { await client.query('ROLLBACK') })
  await client.query(`DROP INDEX ${SCHEMA}.deliveries_undelivered_tenant`)
  t.ok((await rowsRead('deliveries', outbox.failedPage(SCHEMA), resendPage(null, 't3'))).read >= unresolved, 'without deliveries_undelivered_tenant it reads every failure')
})

t.test('without their indexes the same queries scan: the seed is large enough to tell', async (t) => {
  await client.query('BEGIN')
  t.teardown(async () => { await client.query('ROLLBACK') })
  await client.query(`DROP INDEX ${SCHEMA}.deliveries_message`)
  t.match(await plan(outbox.deleteIdle(SCHEMA), [30 * DAY, 1000]), WHOLE_TABLE)
  await client.query(`DROP INDEX ${SCHEMA}.outbox_pending_created, ${SCHEMA}.outbox_failed, ${SCHEMA}.outbox_failed_tenant, ${SCHEMA}.outbox_failed_type, ${SCHEMA}.outbox_due`)
  t.match(await plan(outbox.stats(SCHEMA), []), WHOLE_TABLE)
  await client.query(`DROP INDEX ${SCHEMA}.outbox_tenant_due`)
  t.match(await plan(outbox.claim(SCHEMA), ['plan', 60_000, 100, '']), WHOLE_TABLE)
  await client.query(`DROP INDEX ${SCHEMA}.webhook_events_received_at`)
  t.match(await plan(...events({})), WHOLE_TABLE)
  await client.query(`DROP INDEX ${SCHEMA}.webhook_effects_created_at`)
  t.match(await plan(webhookEffects.deleteCreatedBefore(SCHEMA), [new Date(Date.now() - 30 * DAY * 1000), 1000]), WHOLE_TABLE)
})

t.test('the undelivered view and recover answer from the unresolved attempts', async (t) => {
  const database = openDatabase(db.url)
  t.teardown(async () => await database.close())
  const log = createDeliveryLog(database)
  const page = await log.undelivered({ limit: 100 })
  // The seed leaves every hundredth dispatched message (n % 100 = 7) with two failures and no success.
  t.equal(page.items.length, 100)
  t.ok(page.items.every((item) => item.messageId.endsWith('07') && item.attempts === 2 && item.lastHttpStatus === 503), 'only the never-delivered pairs, by their last attempt')
  const next = await log.undelivered({ limit: 100, cursor: page.next ?? '' })
  t.notOk(next.items.some((item) => page.items.some((seen) => seen.messageId === item.messageId)), 'keyset paging shows each pair once')

  const store = createDeliveryStore(database)
  const [first] = page.items
  if (first === undefined) throw new Error('no undelivered pair in the seed')
  await store.recordAttempt({ messageId: first.messageId, endpointId: first.endpointId, attempt: 3, durationMs: 5, responseHead: '', payloadSha256: 'sha', success: true })
  const rows = await db.query<{ resolved: boolean }>(`SELECT resolved FROM ${SCHEMA}.deliveries WHERE message_id = $1 AND endpoint_id = $2 AND status = 'failed'`,
    [first.messageId, first.endpointId])
  t.same(rows.map((row) => row.resolved), [true, true], 'a success resolves the pair\'s failures')
  t.notOk((await log.undelivered({ limit: 1 })).items.some((item) => item.messageId === first.messageId), 'and the pair leaves the view')
  const recovered = await log.failedSince(first.endpointId, new Date(0).toISOString())
  t.notOk(recovered.includes(first.messageId), 'recover leaves it alone')
  t.ok(recovered.length > 0, 'and still finds the endpoint\'s other failures')
})

t.test('migration 0008 resolves the failures of pairs delivered before it', async (t) => {
  const before = await TestDatabase.create()
  t.teardown(async () => await before.drop())
  const dir = mkdtempSync(join(tmpdir(), 'anvil-migrations-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const file of readdirSync(migrationsDir()).filter((name) => /^000[1-7]_/.test(name))) copyFileSync(join(migrationsDir(), file), join(dir, file))
  await migrate(before.url, { dir })
  const row = `INSERT INTO ${SCHEMA}.deliveries (message_id, endpoint_id, attempt, status, duration_ms, payload_sha256) VALUES ($1, $2, $3, $4, 1, 'sha')`
  await before.query(row, ['m1', 'e1', 1, 'failed'])
  await before.query(row, ['m1', 'e1', 2, 'success'])
  await before.query(row, ['m2', 'e1', 1, 'failed'])
  await migrate(before.url)
  t.same(await before.query(`SELECT message_id, status, resolved FROM ${SCHEMA}.deliveries ORDER BY id`), [
    { message_id: 'm1', status: 'failed', resolved: true },
    { message_id: 'm1', status: 'success', resolved: false },
    { message_id: 'm2', status: 'failed', resolved: false }
  ])
})

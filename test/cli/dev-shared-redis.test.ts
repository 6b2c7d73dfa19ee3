/**
 * Two `anvil dev` in two projects on one Redis (the one that answers on the default URL) and the default
 * prefix: the first project's queue is its own; the second stops before it listens, says whose the queue is,
 * and with a prefix of its own handles its own events, never the first one's. Real processes.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { signAnvil } from '../../src/providers/anvil.js'
import { DEV_SECRET } from '../../cli/config/settings.js'
import { outcome, parseJson, startCli, tempDir, type Cli } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

/** The project's deployment id, kept by anvil dev in its `.anvil/` folder. */
function projectId (dir: string): string | undefined {
  try { return readFileSync(join(dir, '.anvil', 'deployment'), 'utf8').trim() } catch { return undefined }
}

t.test('two anvil dev in two projects on the Redis that answers: neither takes the other\'s events', async (t) => {
  const [dirA, dirB] = [tempDir(t), tempDir(t)]
  const dev = (cwd: string, env: Record<string, string> = {}): Cli =>
    startCli(t, ['dev'], { cwd, env: { ANVIL_DEV_REDIS_PROBE_URL: redis.url, PORT: '0', ...env } })
  const devA = dev(dirA)
  const { port: portA } = await devA.log('anvil dev: listening')
  const idA = projectId(dirA)
  const devB = dev(dirB)
  t.equal(await outcome(devB, devB.log('anvil dev: listening')), 1, 'the second project stops before it listens')
  const idB = projectId(dirB)
  t.equal(devB.stderr, `anvil: queue {anvil}:webhooks on ${redis.url} belongs to deployment ${String(idA)}, not to this project's (${String(idB)}): ` +
    'none of its jobs is taken here; give each project its own ANVIL_PREFIX, or its own Redis (REDIS_URL)\n')

  const devB2 = dev(dirB, { ANVIL_PREFIX: '{anvil-b}' })
  const { port: portB } = await devB2.log('anvil dev: listening')
  const send = async (port: unknown, eventId: string): Promise<number> => {
    const body = JSON.stringify({ id: eventId, type: 'test.ping' })
    const response = await fetch(`http://127.0.0.1:${String(port)}/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-signature': signAnvil(DEV_SECRET, body) } })
    return response.status
  }
  const ids = (tag: string): string[] => Array.from({ length: 15 }, (_, i) => `evt_${tag}_${i}`)
  const statuses = await Promise.all([...ids('a').map(async (id) => await send(portA, id)), ...ids('b').map(async (id) => await send(portB, id))])
  t.ok(statuses.every((status) => status === 202))
  const events = (cli: Cli): string[] => cli.lines.map(parseJson).filter((entry) => entry?.msg === 'anvil dev: event').map((entry) => String(entry?.eventId)).sort()
  await eventually('[devA, devB, devB2].flatMap(events).length >= 30', () => [devA, devB, devB2].flatMap(events).length >= 30 ? true : undefined)
  t.same(events(devA), ids('a').sort(), 'project A handled its own events only')
  t.same(events(devB2), ids('b').sort(), 'project B handled its own events only')
  t.same(events(devB), [], 'the refused run handled none')
  t.equal(await devA.stop(), 0)
  t.equal(await devB2.stop(), 0)

  // Project A given a database: the same project, so its queue passes to the database's id, kept for later runs.
  const db = await TestDatabase.create()
  t.teardown(async () => await db.drop())
  const devA2 = dev(dirA, { ANVIL_DATABASE_URL: db.url })
  await devA2.log('anvil dev: listening')
  const [row] = await db.query<{ id: string }>('SELECT id FROM anvil.deployment')
  t.equal(await redis.command('GET', '{anvil}:webhooks:deployment'), row?.id, 'the queue is the database\'s now')
  t.equal(projectId(dirA), row?.id, 'and so is the project\'s id')
  t.equal(await devA2.stop(), 0)
})

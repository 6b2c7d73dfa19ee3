/**
 * Two `anvil dev` in two projects on one Redis (the one that answers on the default URL) and the default
 * prefix: the first project's queue is its own; the second stops before it listens, says whose the queue is,
 * and with a prefix of its own handles its own events, never the first one's. Real processes.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { signAnvil } from '../src/providers/anvil.js'
import { DEV_SECRET } from '../cli/config/settings.js'
import { eventually, outcome, parseJson, startCli, tempDir, type Cli } from './helpers/cli.js'
import { TestRedis } from './helpers/redis.js'

const redis = await TestRedis.start()
t.teardown(() => redis.stop())

t.test('two anvil dev in two projects on the Redis that answers: neither takes the other\'s events', async (t) => {
  const [dirA, dirB] = [tempDir(t), tempDir(t)]
  const dev = (cwd: string, env: Record<string, string> = {}): Cli =>
    startCli(t, ['dev'], { cwd, env: { ANVIL_DEV_REDIS_PROBE_URL: redis.url, PORT: '0', ...env } })
  const devA = dev(dirA)
  const { port: portA } = await devA.log('anvil dev: listening')
  const idA = readFileSync(join(dirA, '.anvil', 'deployment'), 'utf8').trim()
  const devB = dev(dirB)
  t.equal(await outcome(devB, devB.log('anvil dev: listening')), 1, 'the second project stops before it listens')
  const idB = readFileSync(join(dirB, '.anvil', 'deployment'), 'utf8').trim()
  t.equal(devB.stderr, `anvil: queue {anvil}:webhooks on ${redis.url} belongs to deployment ${idA}, not to this project's (${idB}): ` +
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
  await eventually(() => events(devA).length >= 15 && events(devB2).length >= 15 ? true : undefined)
  t.same(events(devA), ids('a').sort(), 'project A handled its own events only')
  t.same(events(devB2), ids('b').sort(), 'project B handled its own events only')
  t.equal(await devA.stop(), 0)
  t.equal(await devB2.stop(), 0)
})

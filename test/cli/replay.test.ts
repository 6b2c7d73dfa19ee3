/** `anvil replay`: one dead letter, or --all with --limit. Helpers: test/helpers/cli.ts. */
import t from 'tap'
import { deadLetters, inspect, runCli } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

t.test('replay <id> replays one dead letter; again is a no-op; an unknown id exits 1', async (t) => {
  const queueName = 'cli-replay-one'
  const [id] = await deadLetters(t, redis.url, queueName, 1) as [string]
  const env = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName }
  const first = await runCli(['replay', id], { env })
  t.equal(first.code, 0, first.stderr)
  t.same(JSON.parse(first.stdout), { deadLetterId: id, jobId: `r_${id}`, replayedNow: true })
  t.equal(await inspect(t, redis.url, queueName).getJobState(`r_${id}`), 'waiting', 'the replay is queued')
  const again = await runCli(['replay', id], { env })
  t.same(JSON.parse(again.stdout), { deadLetterId: id, jobId: `r_${id}`, replayedNow: false })
  const unknown = await runCli(['replay', 'd_nope'], { env })
  t.equal(unknown.code, 1)
  t.equal(unknown.stderr, 'anvil: no dead letter with id d_nope\n')
  t.equal(unknown.stdout, '')
})

t.test('replay --all --limit N replays at most N, oldest first; --all replays the rest', async (t) => {
  const queueName = 'cli-replay-all'
  const ids = await deadLetters(t, redis.url, queueName, 3)
  const env = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName }
  const limited = await runCli(['replay', '--all', '--limit', '2'], { env })
  t.equal(limited.code, 0, limited.stderr)
  const firstTwo = limited.stdout.split('\n').map((line) => JSON.parse(line) as { deadLetterId: string, replayedNow: boolean })
  t.same(firstTwo.map((r) => r.deadLetterId), ids.slice(0, 2))
  t.ok(firstTwo.every((r) => r.replayedNow))
  const rest = await runCli(['replay', '--all'], { env })
  t.equal(rest.code, 0, rest.stderr)
  t.same(JSON.parse(rest.stdout), { deadLetterId: ids[2], jobId: `r_${ids[2] as string}`, replayedNow: true })
  const none = await runCli(['replay', '--all'], { env })
  t.same([none.code, none.stdout], [0, ''], 'nothing left to replay')
})
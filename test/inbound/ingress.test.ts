import t from 'tap'
import { inspectQueue } from '../helpers/queue.js'
import { startTarget } from '../helpers/target.js'
import { buildApp, signed } from '../helpers/app.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())

t.test('a signed webhook gets 202 with a job id, the second delivery is replayed', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'basic' })
  t.teardown(() => app.close())
  const body = JSON.stringify({ id: 'evt_1', type: 'charge.succeeded' })
  const first = await app.inject(signed(body))
  t.equal(first.statusCode, 202, first.body)
  const a = first.json()
  t.match(a, { jobId: /^e_/, replayed: false })
  const second = await app.inject(signed(body))
  t.equal(second.statusCode, 202)
  t.same(second.json(), { jobId: a.jobId, replayed: true })
  const queue = inspectQueue(redis, 'basic')
  t.teardown(() => queue.close())
  t.equal(await queue.count(), 1)
})

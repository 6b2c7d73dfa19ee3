import t from 'tap'
import { TestRedis } from '../helpers/redis.js'
import { conformance } from '../helpers/providers.js'
import { inspectQueue } from '../helpers/queue.js'
import { beforeAll } from '../helpers/before-all.js'

// GitLab sends its secret token as is (X-Gitlab-Token): nothing is signed, so the token does not bind the
// body and there is no "tampered body" check (docs/providers.md says so).
const [CURRENT, OLDER, WRONG] = ['gl-current-0123456789', 'gl-older-0123456789', 'gl-never']

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'gitlab', secrets: [CURRENT, OLDER] },
  path: '/gitlab',
  signers: [CURRENT, OLDER, WRONG],
  body: (id) => JSON.stringify({ object_kind: 'push', checkout_sha: id }),
  sign: (body, { signer, deliveryId }) => ({
    headers: {
      'x-gitlab-token': signer as string,
      'x-gitlab-event': 'Push Hook',
      'x-gitlab-event-uuid': `uuid-${deliveryId}`,
      'idempotency-key': deliveryId
    }
  }),
  timestamped: false,
  bindsBody: false,
  eventType: 'Push Hook',
  expectedEventId: (_id, delivery) => delivery
})

t.test('gitlab: the token is never stored on the job', async (t) => {
  const queue = inspectQueue(redis.url, 'conf-gitlab')
  t.teardown(() => queue.close())
  for (const job of await queue.getJobs()) {
    t.notOk(JSON.stringify(job.data).includes('gl-'), 'no token in job data')
    t.equal(job.data.signature, undefined)
  }
})

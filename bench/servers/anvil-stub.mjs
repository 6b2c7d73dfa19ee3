// BENCH-ONLY STUB, not a real-Redis figure: the Anvil plugin route of anvil-plugin.mjs (Fastify logger off)
// with the queue's `enqueue` replaced by an in-memory Map that dedupes by key. Verification, key derivation,
// the job data and the route are Anvil's own; Redis and BullMQ are not involved. It exists only to compare
// with Anvil 0.1's published 10.5k req/s, which was measured against such a stub.
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import anvil from '../../dist/index.js'

const app = Fastify({ logger: false })
// The plugin still connects to Redis (it waits for it at registration); no command is sent once it runs.
await app.register(anvil, { redis: process.env.REDIS_URL, secret: process.env.WEBHOOK_SECRET })

const { queue } = app.anvil.ingress
const seen = new Map()
/** Kept under a bound so a long run does not measure a growing Map's rehashing. */
const MAX_KEYS = 1_000_000
queue.enqueue = async (input) => {
  const known = seen.get(input.key)
  if (known !== undefined) return { jobId: known, replayed: true }
  // What the real enqueue builds before BullMQ sees it: a job id, the payload in base64, the retry schedule.
  const jobId = 'e_' + randomUUID()
  const data = { ...input, v: 1, payload: input.payload.toString('base64'), retry: [...queue.settings.retrySchedule] }
  if (seen.size >= MAX_KEYS) seen.clear()
  seen.set(data.key, jobId)
  return { jobId, replayed: false }
}
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.once('SIGTERM', () => app.close().then(() => process.exit(0), () => process.exit(1)))

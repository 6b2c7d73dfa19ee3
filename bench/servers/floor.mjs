// The floor: the least a correct ingress does. Raw bytes, constant-time HMAC, sha256 key,
// one BullMQ add with a dedupe window, 202 after Redis acknowledged.
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import Fastify from 'fastify'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'

const secret = process.env.WEBHOOK_SECRET
const connection = new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
const queue = new Queue('floor', { connection, prefix: '{floor}' })
const app = Fastify({ logger: false })
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
app.post('/webhooks', async (request, reply) => {
  const header = request.headers['x-signature']
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/.test(header)) return reply.code(401).send({ error: 'bad signature' })
  const expected = createHmac('sha256', secret).update(request.body).digest()
  if (!timingSafeEqual(expected, Buffer.from(header.slice(7), 'hex'))) return reply.code(401).send({ error: 'bad signature' })
  const key = createHash('sha256').update(header).update('\0').update(request.body).digest('hex')
  const jobId = 'j' + randomUUID()
  try {
    const job = await queue.add('w', { payload: request.body.toString('base64') },
      { jobId, deduplication: { id: key, ttl: 259200000 }, removeOnComplete: true })
    return reply.code(202).send({ jobId: job.id, replayed: job.id !== jobId })
  } catch {
    return reply.code(503).send({ error: 'unavailable' })
  }
})
await queue.waitUntilReady()
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.send?.('ready')
// A clean exit on SIGTERM, so that `node --cpu-prof` writes its profile (bench/profile.mjs --server floor).
process.once('SIGTERM', () => app.close().then(() => queue.close()).then(() => process.exit(0), () => process.exit(1)))

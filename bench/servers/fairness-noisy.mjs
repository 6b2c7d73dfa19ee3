// The noisy tenant of bench/outbound-fairness.mjs, in its own process so that its 300 requests do not take the
// event loop that times the quiet tenant. On each IPC message `{ admin, token, deliveryId, retries, messages }`:
// the concurrent hand retries, then `{ stormed }`, then the messages published to its endpoints; answers `{ statuses }`.
import { createOutbound } from '../../dist/index.js'

const outbound = createOutbound({ database: process.env.DATABASE_URL, redis: process.env.REDIS_URL })
process.on('message', async ({ admin, token, deliveryId, retries, messages }) => {
  const statuses = await Promise.all(Array.from({ length: retries }, async () => {
    const res = await fetch(`${admin}/deliveries/${deliveryId}/retry`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    await res.arrayBuffer()
    return res.status
  }))
  // The quiet tenant starts as the burst is published, so that its messages are queued beside the burst.
  process.send({ stormed: true })
  for (let i = 0; i < messages; i++) await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'noisy' })
  process.send({ statuses })
})
process.once('SIGTERM', () => { outbound.close().then(() => process.exit(0), () => process.exit(1)) })
process.send({ ready: true })

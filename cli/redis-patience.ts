/**
 * The CLI's patience with a Redis that does not answer yet (down, restarting, or too busy to finish the
 * connection's handshake): wait as long as it takes, as ioredis keeps reconnecting, and say so once after a
 * while. `anvil worker` waits so before it takes jobs, and the one-shot commands that reach Redis directly
 * (`anvil messages resend`, `anvil subjects erase`, `anvil tenants delete`) before their first command, instead of answering "queue unavailable".
 */
import { redactUrl } from '../src/redis/connect.js'
import type { Outbound } from '../src/outbox/outbound.js'
import type { OutboundOptions } from '../src/outbox/outbound-options.js'

/** How long the first connection may take before the notice. */
export const REDIS_WAIT_NOTICE_MS = 2000

/** `ready`'s value, once it settles; `notice(url)` is said once if that takes longer than REDIS_WAIT_NOTICE_MS. */
export async function patientlyFor<T> (ready: Promise<T>, redisUrl: string, notice: (redis: string) => void): Promise<T> {
  const timer = setTimeout(() => notice(redactUrl(redisUrl)), REDIS_WAIT_NOTICE_MS)
  timer.unref()
  try {
    return await ready
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The outbound side for a one-shot command straight to PostgreSQL and Redis, once its queue's Redis answers. That
 * connection fails a command at once while it is not ready (it serves publish): waiting first, as the worker does,
 * makes a Redis slow to answer delay the command instead of failing it.
 */
export async function readyOutbound (options: OutboundOptions & { redis: string }): Promise<Outbound> {
  const { createOutbound, outboundInternals } = await import('../src/outbox/outbound.js')
  const outbound = createOutbound(options)
  try {
    await patientlyFor(outboundInternals(outbound).queue.waitUntilReady(), options.redis, (redis) => process.stderr.write(`anvil: waiting for Redis (${redis}) to answer\n`))
  } catch (err) {
    await outbound.close()
    throw err
  }
  return outbound
}

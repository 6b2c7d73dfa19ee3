/**
 * The CLI's patience with a Redis that does not answer yet (down, restarting, or too busy to finish the
 * connection's handshake): wait as long as it takes, as ioredis keeps reconnecting, and say so once after a
 * while. `anvil worker` waits so before it takes jobs, and the one-shot commands that reach Redis directly
 * (`anvil messages resend`) before their first command, instead of answering "queue unavailable".
 */
import { redactUrl } from '../src/redis/connect.js'

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

/**
 * Where the console's sessions and its failed logins are kept, so a logout ends a session on the server and a
 * guesser is slowed per client address: in Redis when the admin API is given one (every replica sees the same
 * sessions: `anvil serve` always has it), else in this process's memory.
 */
import { connect, disconnect, type OwnedConnection, type RedisInput } from '../../src/redis/connect.js'
import { redisWithin } from '../../src/redis/redis-within.js'
import { errors } from '../../src/shared/errors.js'

export interface LoginFailures { count: number, retryAfterMs: number }

export interface SessionStore {
  open: (id: string, expiresAt: number) => Promise<void>
  isOpen: (id: string, now: number) => Promise<boolean>
  end: (id: string) => Promise<void>
  /** Ends every session ("log out everywhere"). */
  endAll: () => Promise<void>
  /**
   * Counts a login from `client` before its token is compared, in a window of `windowMs` from its first count,
   * and answers the count with this one: counted first, so logins at once cannot all pass a check made before.
   */
  attempt: (client: string, windowMs: number) => Promise<LoginFailures>
  /** Takes back an attempt that was no failure (the right token, or one refused unread), so only failures count. */
  forgive: (client: string) => Promise<void>
  close: () => Promise<void>
}

/** How long the store has to answer before the request gets 503. */
export const SESSION_STORE_TIMEOUT_MS = 2000
/** The memory store forgets the oldest client past this many, so a flood of addresses cannot grow it without bound. */
const MAX_REMEMBERED_CLIENTS = 10_000

export function memorySessionStore (): SessionStore {
  const sessions = new Map<string, number>()
  const failed = new Map<string, { count: number, until: number }>()
  const current = (client: string, now = Date.now()): { count: number, until: number } | undefined => {
    const entry = failed.get(client)
    if (entry !== undefined && entry.until <= now) failed.delete(client)
    return entry !== undefined && entry.until > now ? entry : undefined
  }
  return {
    async open (id, expiresAt) {
      const now = Date.now()
      for (const [open, until] of sessions) if (until <= now) sessions.delete(open)
      sessions.set(id, expiresAt)
    },
    async isOpen (id, now) { return (sessions.get(id) ?? 0) > now },
    async end (id) { sessions.delete(id) },
    async endAll () { sessions.clear() },
    async attempt (client, windowMs) {
      const now = Date.now()
      const entry = current(client, now) ?? { count: 0, until: now + windowMs }
      failed.delete(client)
      failed.set(client, { count: entry.count + 1, until: entry.until })
      if (failed.size > MAX_REMEMBERED_CLIENTS) failed.delete(failed.keys().next().value as string)
      return { count: entry.count + 1, retryAfterMs: entry.until - now }
    },
    async forgive (client) {
      const entry = current(client)
      if (entry !== undefined) entry.count = Math.max(0, entry.count - 1)
    },
    async close () {}
  }
}

const FORGIVE_SCRIPT = "if redis.call('exists', KEYS[1]) == 1 then return redis.call('decr', KEYS[1]) end return 0"

/** Redis as the store: the sessions in one sorted set (member: the session's id, score: its expiry), a counter per client. */
export function redisSessionStore (redis: RedisInput, prefix: string): SessionStore {
  const connection: OwnedConnection = connect(redis, 'control')
  const { client } = connection
  const sessionsKey = `${prefix}:admin:sessions`
  const failuresKey = (address: string): string => `${prefix}:admin:login-failures:${address}`
  const run = async <T>(command: () => Promise<T>): Promise<T> => {
    try {
      return await redisWithin(command(), SESSION_STORE_TIMEOUT_MS)
    } catch (err) {
      throw new errors.SESSION_STORE_UNAVAILABLE({ cause: err })
    }
  }
  return {
    async open (id, expiresAt) {
      await run(async () => await client.multi()
        .zremrangebyscore(sessionsKey, '-inf', Date.now())
        .zadd(sessionsKey, expiresAt, id)
        // The newest session lives longest: the set goes when it would have.
        .pexpireat(sessionsKey, expiresAt)
        .exec())
    },
    async isOpen (id, now) {
      const score = await run(async () => await client.zscore(sessionsKey, id))
      return score !== null && Number(score) > now
    },
    async end (id) { await run(async () => await client.zrem(sessionsKey, id)) },
    async endAll () { await run(async () => await client.del(sessionsKey)) },
    async attempt (address, windowMs) {
      const key = failuresKey(address)
      const replies = await run(async () => await client.multi().incr(key).pexpire(key, windowMs, 'NX').pttl(key).exec())
      const [count, , ttl] = (replies ?? []).map(([, value]) => Number(value))
      // An answer that is no count (never seen) refuses rather than lets a guess through.
      return { count: Number.isInteger(count) ? count as number : Infinity, retryAfterMs: ttl !== undefined && ttl > 0 ? ttl : windowMs }
    },
    async forgive (address) {
      // Only while the window lasts: a DECR after it ended would make a key that never expires.
      await run(async () => await client.eval(FORGIVE_SCRIPT, 1, failuresKey(address)))
    },
    async close () { await disconnect(connection) }
  }
}

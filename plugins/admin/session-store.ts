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
  /** Counts a failed login from `client` in a window of `windowMs` that starts with its first failure. */
  fail: (client: string, windowMs: number) => Promise<void>
  failures: (client: string) => Promise<LoginFailures>
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
    async fail (client, windowMs) {
      const now = Date.now()
      const entry = current(client, now) ?? { count: 0, until: now + windowMs }
      failed.delete(client)
      failed.set(client, { count: entry.count + 1, until: entry.until })
      if (failed.size > MAX_REMEMBERED_CLIENTS) failed.delete(failed.keys().next().value as string)
    },
    async failures (client) {
      const now = Date.now()
      const entry = current(client, now)
      return entry === undefined ? { count: 0, retryAfterMs: 0 } : { count: entry.count, retryAfterMs: entry.until - now }
    },
    async close () {}
  }
}

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
    async fail (address, windowMs) {
      await run(async () => await client.multi().incr(failuresKey(address)).pexpire(failuresKey(address), windowMs, 'NX').exec())
    },
    async failures (address) {
      const [count, ttl] = await run(async () => await Promise.all([client.get(failuresKey(address)), client.pttl(failuresKey(address))]))
      return { count: Number(count ?? 0), retryAfterMs: Math.max(ttl, 0) }
    },
    async close () { await disconnect(connection) }
  }
}

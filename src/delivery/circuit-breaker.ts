/**
 * A circuit breaker per endpoint, kept in Redis so every worker process sees the same state. After
 * `failureThreshold` consecutive failures it opens: the endpoint's jobs are put back as delayed until
 * `openMs` has passed, so they hold no worker slot. Then one job (holding a lease) is let through as a
 * probe: its success closes the circuit, its failure opens it again. The open window is measured on
 * Redis's clock (TIME, read in the same transaction as the state), so a process whose clock is off
 * neither closes it early nor keeps it open late.
 */
import type { RedisClient } from '../redis/connect.js'
import { redisTimeMs } from '../redis/clock-skew.js'

export interface CircuitSettings {
  failureThreshold: number
  openMs: number
  /** How long a probe may take before another job may probe: longer than a delivery's timeout. */
  probeLeaseMs: number
  /**
   * How long this process trusts a clean read (no failure, not open) without asking Redis again, so a
   * healthy endpoint costs no round trip per delivery; a circuit another process opens is seen this late.
   */
  cleanCacheMs?: number
}

/** Whether a job may send now; when not, the time to try again (ms since the epoch, on this process's clock, as BullMQ's delays are). */
export type Admission = { send: true, probe: boolean, dirty: boolean } | { send: false, retryAt: number }

/** A change of state this call made: the gauge and the log follow it. */
export type CircuitChange = 'opened' | 'closed' | undefined

/** State outlives no endpoint for long: an endpoint not seen for a week starts closed. */
const STATE_TTL_MS = 7 * 24 * 3_600_000
/** Jobs waiting on an open circuit come back spread over this much, not all at once. */
const SPREAD_MS = 1000

/** Frozen: shared by every admission of a clean endpoint. */
const CLEAN: Admission = Object.freeze({ send: true, probe: false, dirty: false })

/**
 * `now`, where given, is the shared clock's time (a test's); by default Redis's TIME. The clean-read cache
 * is this process's own and uses its clock.
 */
export interface CircuitBreaker {
  /** The admission of an endpoint read clean lately, without asking Redis; undefined when `admit` must ask. */
  admitCached (endpointId: string, now?: number): Admission | undefined
  admit (endpointId: string, now?: number): Promise<Admission>
  /** Records an outcome of a job `admit` let through. */
  record (endpointId: string, success: boolean, admission: { probe: boolean, dirty: boolean }, now?: number): Promise<CircuitChange>
}

type Reply<T> = [Error | null, T]

export function createCircuitBreaker (client: RedisClient, keyPrefix: string, settings: CircuitSettings): CircuitBreaker {
  const keyOf = (endpointId: string): string => `${keyPrefix}:outbound:circuit:${endpointId}`
  const probeKeyOf = (endpointId: string): string => `${keyOf(endpointId)}:probe`
  const spread = (): number => Math.floor(Math.random() * SPREAD_MS)
  const cleanCacheMs = settings.cleanCacheMs ?? 0
  /** Endpoints read clean, until when. */
  const clean = new Map<string, number>()

  return {
    admitCached (endpointId, now = Date.now()) {
      return (clean.get(endpointId) ?? 0) > now ? CLEAN : undefined
    },

    async admit (endpointId, now) {
      const localNow = Date.now()
      if ((clean.get(endpointId) ?? 0) > localNow) return CLEAN
      const [[, [failures, openUntil]], [, time]] = await client.multi().hmget(keyOf(endpointId), 'failures', 'openUntil').time().exec() as
        [Reply<[string | null, string | null]>, Reply<[string, string]>]
      if (openUntil === null && failures === null && cleanCacheMs > 0) {
        // Bounded: the cache is cleared whole when it grows past what any worker has endpoints in flight.
        if (clean.size > 10_000) clean.clear()
        clean.set(endpointId, localNow + cleanCacheMs)
      }
      if (openUntil === null) return { send: true, probe: false, dirty: failures !== null }
      const sharedNow = now ?? redisTimeMs(time)
      // What is left of the window, counted from this process's now: BullMQ delays on its own clock.
      const left = Number(openUntil) - sharedNow
      if (left > 0) return { send: false, retryAt: localNow + left + spread() }
      // Half-open: one job probes; the rest wait for its outcome.
      const leased = await client.set(probeKeyOf(endpointId), '1', 'PX', settings.probeLeaseMs, 'NX')
      if (leased === 'OK') return { send: true, probe: true, dirty: true }
      return { send: false, retryAt: localNow + Math.min(settings.openMs, settings.probeLeaseMs) + spread() }
    },

    async record (endpointId, success, admission, now) {
      const key = keyOf(endpointId)
      if (!success) clean.delete(endpointId)
      if (success) {
        // A success on a clean circuit writes nothing: the common case costs the one HMGET of admit.
        if (!admission.dirty) return undefined
        const [[, wasOpen]] = await client.multi().hget(key, 'openUntil').del(key).del(probeKeyOf(endpointId)).exec() as [[unknown, string | null]]
        return wasOpen === null ? undefined : 'closed'
      }
      if (admission.probe) {
        const until = (now ?? await redisNow(key)) + settings.openMs
        await client.multi().hset(key, 'openUntil', until).pexpire(key, STATE_TTL_MS).del(probeKeyOf(endpointId)).exec()
        return undefined
      }
      const [[, failures], , [, time]] = await client.multi().hincrby(key, 'failures', 1).pexpire(key, STATE_TTL_MS).time().exec() as
        [Reply<number>, Reply<number>, Reply<[string, string]>]
      if (failures < settings.failureThreshold) return undefined
      // HSETNX: of the workers that see the threshold crossed, one opens the circuit (and says so).
      const opened = await client.hsetnx(key, 'openUntil', (now ?? redisTimeMs(time)) + settings.openMs)
      return opened === 1 ? 'opened' : undefined
    }
  }

  /** Redis's time, read on the node that holds `key` (on a cluster, the one whose clock the state lives by). */
  async function redisNow (key: string): Promise<number> {
    const [, [, time]] = await client.multi().exists(key).time().exec() as [Reply<number>, Reply<[string, string]>]
    return redisTimeMs(time)
  }
}

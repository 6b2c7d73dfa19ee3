/**
 * A worker whose host clock is off from Redis's takes no jobs. BullMQ stamps delays and promotes delayed jobs with
 * each process's `Date.now()`: one worker 10 min ahead promoted every worker's retries due within 10 min at once
 * (a schedule of 1, 2 and 4 min fired 0.7 s and 0.25 s apart). So a worker measures the skew against Redis's `TIME`
 * before it takes its first job and at each minute check (src/redis/clock-skew.ts); while it is more than
 * `maxClockSkewMs` it is paused (its jobs in flight finish), not ready, and says so once a minute, until it agrees again.
 */
import { performance } from 'node:perf_hooks'
import { CLOCK_CHECK_INTERVAL_MS, type ClockLogger, measureClockSkew, onClockChecked } from './clock-skew.js'
import type { RedisClient } from './connect.js'

export const DEFAULT_MAX_CLOCK_SKEW_MS = 5000

export interface ClockGuard {
  /** Measures the skew once, now; true when this worker may take jobs. */
  first (): Promise<boolean>
  /** False while the clock is off by more than the bound. */
  readonly ok: boolean
  stop (): void
}

export interface ClockGuardOptions {
  /** 0 turns the guard off. */
  maxSkewMs: number
  /** The worker, as its lines name it (`anvil worker`, `anvil delivery`). */
  name: string
  /** Called on each change: pause on false, resume on true. */
  onChange (ok: boolean): void
}

/** While off, at most one line per this long (on the monotonic clock: the wall clock is the one in doubt). */
const OFF_LINE_EVERY_MS = CLOCK_CHECK_INTERVAL_MS * 0.9

export function guardClock (client: RedisClient, log: ClockLogger, options: ClockGuardOptions): ClockGuard {
  let ok = true
  let lastLine = -Infinity
  /** Judges a measured skew; true when the verdict changed. */
  const judge = (skewSeconds: number): boolean => {
    if (options.maxSkewMs === 0) return false
    const off = Math.abs(skewSeconds) * 1000 > options.maxSkewMs
    const fields = { skewSeconds: Math.round(skewSeconds * 1000) / 1000, maxClockSkewMs: options.maxSkewMs }
    // One line a minute while off: the start's own check and the minute check's first come together.
    if (off && performance.now() - lastLine >= OFF_LINE_EVERY_MS) {
      lastLine = performance.now()
      log.warn(fields, `${options.name}: this host's clock is off from Redis's by more than maxClockSkewMs; taking no jobs (not ready) until it agrees again`)
    }
    if (off === !ok) return false
    ok = !off
    if (ok) {
      lastLine = -Infinity
      log.info(fields, `${options.name}: this host's clock agrees with Redis's again; taking jobs`)
    }
    return true
  }
  const stop = onClockChecked((skew) => { if (judge(skew)) options.onChange(ok) })
  return {
    get ok () { return ok },
    async first () {
      if (options.maxSkewMs > 0) judge(await measureClockSkew(client))
      return ok
    },
    stop
  }
}

/**
 * This host's clock against Redis's. BullMQ schedules delays with each client's `Date.now()`, so one process
 * whose clock is off fires every worker's retries early or late: each process that talks to Redis compares
 * the two at start and every minute, warns once when they are more than 2 s apart (and once when they agree
 * again), and keeps the last figure for the `anvil_clock_skew_seconds` gauge. Once per process, whichever of
 * its workers or ingresses started it, on any of their clients.
 */
import type { RedisClient } from './connect.js'

/** Beyond this, the warning. */
export const CLOCK_SKEW_WARN_SECONDS = 2
export const CLOCK_CHECK_INTERVAL_MS = 60_000

export interface ClockLogger {
  warn (fields: object, message?: string): void
  info (fields: object, message?: string): void
}

/** Redis's time, ms since the epoch, from a TIME reply. */
export function redisTimeMs ([seconds, micros]: [string | number, string | number]): number {
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}

/** Seconds this clock is ahead of Redis's (negative: behind), taken at the middle of the round trip. */
export async function measureClockSkew (client: RedisClient): Promise<number> {
  const before = Date.now()
  const reply = await client.time() as unknown as [string, string]
  const after = Date.now()
  return ((before + after) / 2 - redisTimeMs(reply)) / 1000
}

interface Watcher { client: RedisClient, log: ClockLogger }

const watchers: Watcher[] = []
/** Told each measured skew (src/redis/clock-guard.ts). */
const listeners = new Set<(skewSeconds: number) => void>()
let timer: NodeJS.Timeout | undefined
let lastSkew: number | undefined
let warned = false

/** The last measured skew in seconds, undefined before the first check. */
export function clockSkewSeconds (): number | undefined {
  return lastSkew
}

/** Each skew the minute check measures, until the returned stop is called. */
export function onClockChecked (listener: (skewSeconds: number) => void): () => void {
  listeners.add(listener)
  return () => { listeners.delete(listener) }
}

/** The minute check, now (a test that moves a process's clock asks for it rather than wait the minute). */
export async function checkClockNow (): Promise<void> {
  await check()
}

async function check (): Promise<void> {
  const watcher = watchers.find((one) => one.client.status === 'ready')
  if (watcher === undefined) return
  let skew: number
  try {
    skew = await measureClockSkew(watcher.client)
  } catch {
    // Redis away: the next check tries again; the health routes already say so.
    return
  }
  lastSkew = skew
  const off = Math.abs(skew) > CLOCK_SKEW_WARN_SECONDS
  const fields = { skewSeconds: Math.round(skew * 1000) / 1000, limitSeconds: CLOCK_SKEW_WARN_SECONDS }
  if (off && !warned) watcher.log.warn(fields, 'anvil: this host\'s clock is off from Redis\'s; delayed jobs and retries fire early or late')
  else if (!off && warned) watcher.log.info(fields, 'anvil: this host\'s clock agrees with Redis\'s again')
  warned = off
  for (const listener of listeners) listener(skew)
}

/**
 * Checks this process's clock against Redis's through `client` (at once, or once it is connected) and every
 * minute, until the returned stop is called; a second watcher in the same process adds no check of its own.
 */
export function watchClock (client: RedisClient, log: ClockLogger): () => void {
  const watcher = { client, log }
  watchers.push(watcher)
  if (timer === undefined) {
    timer = setInterval(() => { void check() }, CLOCK_CHECK_INTERVAL_MS)
    timer.unref()
    if (client.status === 'ready') void check()
    else client.once('ready', () => { void check() })
  }
  return () => {
    const index = watchers.indexOf(watcher)
    if (index === -1) return
    watchers.splice(index, 1)
    if (watchers.length === 0) {
      clearInterval(timer)
      timer = undefined
    }
  }
}

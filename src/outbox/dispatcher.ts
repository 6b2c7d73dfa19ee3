import { randomUUID } from 'node:crypto'
import pg from 'pg'
import type { Database } from '../db/database.js'
import * as sql from '../sql/outbox.js'
import type { OutboxRow } from '../sql/outbox.js'
import { redisWithin } from '../redis/redis-within.js'
import type { RedisGate } from '../redis/redis-outage.js'
import type { FanOut, OutboxMessage } from './fan-out.js'
import { outboxChannels } from './outbox-channels.js'
import { outboxChannel } from './publish.js'
import type { Ordering } from './ordering.js'
import type { AnvilLogger } from '../shared/logger.js'
import type { Telemetry } from '../queue/telemetry.js'
import { SpanKind, startSpan, traceOfRow } from '../queue/trace-context.js'

export interface DispatchRetry {
  /** The first retry's delay; each next one doubles. */
  baseMs: number
  maxMs: number
  /** After this many failed dispatches the message is `failed`. */
  attempts: number
}

export interface DispatcherSettings {
  pollIntervalMs: number
  /** After a pass that found work, the next one comes this soon, until a pass finds none. */
  busyPollMs: number
  leaseMs: number
  batchSize: number
  retry: DispatchRetry
  /** A `dispatch <type>` span per message of a trace, the child of its publish span. @defaultValue none */
  telemetry?: Telemetry
}

/** The wait after the `attempts`-th failed dispatch: base, 2×base, 4×base … capped. */
export function dispatchDelay (attempts: number, retry: DispatchRetry): number {
  return Math.min(retry.baseMs * 2 ** Math.max(0, attempts - 1), retry.maxMs)
}

export interface ClaimedMessage extends OutboxMessage {
  attempts: number
}

export interface Dispatcher {
  /** Claims up to a batch of due messages under this dispatcher's lease (exposed for tests and tools). */
  claim (limit?: number): Promise<ClaimedMessage[]>
  /** Claims and fans out one batch; the number of messages claimed. */
  dispatchOnce (): Promise<number>
  /** Listens for commits and polls as a backstop, until closed. */
  start (): Promise<void>
  /** Wakes the loop now (a NOTIFY does the same). */
  wake (): void
  close (): Promise<void>
}

/**
 * Moves outbox rows to the delivery queue. A claim is `FOR UPDATE SKIP LOCKED` plus a lease, so dispatchers
 * never take the same row at once, and a row whose dispatcher died is taken again when its lease ends; the
 * jobs' deterministic ids make that second fan-out add nothing. While the delivery queue's Redis is away
 * nothing is claimed, and a fan-out that Redis failed gives its attempt back: an outage is not the message's failure.
 */
/**
 * A pass claims and starts fan-outs without waiting for those already running: a message published while this
 * process fans out another tenant's burst (hundreds of jobs a message, through the lane of src/outbox/fan-out-lane.ts)
 * is claimed at once and its jobs take their turn in the lane, not after the burst. At most a batch of messages is
 * being fanned out at once; claims never overlap (SKIP LOCKED).
 */
export function createDispatcher (db: Database, fanOut: FanOut, settings: DispatcherSettings, log: AnvilLogger, redis: RedisGate, ordering?: Ordering): Dispatcher {
  const owner = randomUUID()
  let closed = false
  let redisAway = false
  let again = false
  let timer: NodeJS.Timeout | undefined
  let followUp: NodeJS.Timeout | undefined
  let listener: pg.PoolClient | undefined
  // One release of keyed heads at a time in this process; a call meanwhile runs it once more after.
  let releasing: Promise<void> | undefined
  let releaseAgain = false

  // The claim's cursor between tenants (src/sql/outbox.ts): with more tenants pending than a batch holds, the next claim starts past the last one served.
  let cursor = ''
  async function claim (limit = settings.batchSize): Promise<ClaimedMessage[]> {
    type Claimed = Pick<OutboxRow, 'id' | 'public_type' | 'tenant' | 'data' | 'created_at' | 'attempts' | 'operational' | 'ordering_key' | 'ordering_seq' | 'traceparent' | 'tracestate'>
      & { tenant_key: string, turn: number }
    const { rows } = await db.pool.query<Claimed>(sql.claim(db.schema), [owner, settings.leaseMs, limit, cursor])
    let last: Claimed | undefined
    for (const row of rows) if (last === undefined || row.turn > last.turn) last = row
    if (last !== undefined) cursor = last.tenant_key
    return rows.map((row) => ({
      id: row.id, publicType: row.public_type, tenant: row.tenant, data: row.data, createdAt: row.created_at, attempts: row.attempts, operational: row.operational,
      orderingKey: row.ordering_key, orderingSeq: row.ordering_seq, ...traceOfRow(row)
    }))
  }

  /** Adds the jobs of the keyed heads made ready (src/outbox/ordering.ts), a batch at a time until none is left. */
  async function releaseHeads (): Promise<void> {
    if (ordering === undefined) return
    if (releasing !== undefined) {
      releaseAgain = true
      return await releasing
    }
    releasing = (async () => {
      do {
        releaseAgain = false
        let read = 0
        do read = await ordering.releaseReady(settings.batchSize)
        while (!closed && read === settings.batchSize)
      } while (releaseAgain && !closed)
    })().finally(() => { releasing = undefined })
    return await releasing
  }

  function noteRedis (away: boolean, err?: string): void {
    if (away === redisAway) return
    redisAway = away
    if (away) log.warn({ err }, 'anvil outbound: Redis is unavailable; dispatch waits for it')
    else log.info({}, 'anvil outbound: Redis is back; dispatching')
  }

  /** A message of a trace is dispatched in a span of it, whose context its jobs carry. */
  async function dispatchOne (claimed: ClaimedMessage): Promise<void> {
    const span = settings.telemetry === undefined || claimed.trace === undefined
      ? undefined
      : startSpan(settings.telemetry, `dispatch ${claimed.publicType ?? ''}`, SpanKind.INTERNAL, claimed.trace, { 'anvil.message.id': claimed.id, 'anvil.attempt': claimed.attempts })
    const message = span?.context === undefined ? claimed : { ...claimed, trace: span.context }
    let failure: Error | undefined
    try {
      await dispatchTraced(message)
    } catch (err) {
      failure = err as Error
      throw err
    } finally {
      span?.end(failure)
    }
  }

  async function dispatchTraced (message: ClaimedMessage): Promise<void> {
    try {
      if (ordering !== undefined && message.orderingKey !== undefined && message.orderingKey !== null) {
        // A keyed message: rows that wait for their turn, written with its dispatch; the heads' jobs are added below.
        if (await ordering.enqueue(message, owner) && outboxChannels.dispatched.hasSubscribers) outboxChannels.dispatched.publish({ eventType: message.publicType ?? '', jobs: 0 })
        return
      }
      // Bounded: a Redis that stops answering must not hold the claim until its lease ends and another takes it.
      const jobs = await redisWithin(fanOut(message), Math.max(1, Math.floor(settings.leaseMs / 2)))
      if (outboxChannels.dispatched.hasSubscribers) outboxChannels.dispatched.publish({ eventType: message.publicType ?? '', jobs: jobs.length })
      await db.pool.query(sql.markDispatched(db.schema), [message.id, owner])
    } catch (err) {
      const error = (err as Error).message
      if (redis.outage(err)) {
        noteRedis(true, error)
        // Redis's failure, not the message's: the attempt is given back and the row waits one poll.
        await db.pool.query(sql.giveBack(db.schema),
          [message.id, owner, settings.pollIntervalMs, `Redis unavailable: ${error}`])
        return
      }
      const failed = message.attempts >= settings.retry.attempts
      ;(failed ? log.error : log.warn).call(log, { messageId: message.id, attempts: message.attempts, err: error },
        failed ? 'anvil outbound: dispatch failed for good' : 'anvil outbound: dispatch failed, will retry')
      await db.pool.query(sql.dispatchFailed(db.schema),
        [message.id, owner, failed ? 'failed' : 'pending', dispatchDelay(message.attempts, settings.retry), error])
    }
  }

  async function dispatchOnce (): Promise<number> {
    // Nothing is claimed (so no attempt used) while Redis is away; a pass waits up to one poll for it to come.
    if (!await redis.untilReady(settings.pollIntervalMs)) {
      noteRedis(true, 'not connected')
      return 0
    }
    noteRedis(false)
    const claimed = await claim()
    await Promise.all(claimed.map(dispatchOne))
    await releaseHeads()
    return claimed.length
  }

  // Fan-outs under way in this process (the loop's), and whether a claim loop is running.
  const fanningOut = new Set<Promise<void>>()
  let looping: Promise<void> | undefined

  /** Claims while there is room and something is due, starting each message's fan-out without waiting for it. */
  async function loop (): Promise<number> {
    let found = 0
    do {
      again = false
      while (!closed && fanningOut.size < settings.batchSize) {
        if (!await redis.untilReady(settings.pollIntervalMs)) { noteRedis(true, 'not connected'); break }
        noteRedis(false)
        const room = settings.batchSize - fanningOut.size
        const claimed = await claim(room)
        found += claimed.length
        const batch = claimed.map((message) => {
          // A failure to write the outcome (PostgreSQL away) leaves the lease to end: the next claim takes the message.
          const one: Promise<void> = dispatchOne(message).catch((err: Error) => {
            log.warn({ messageId: message.id, err: err.message }, 'anvil outbound: dispatch not recorded; the message is claimed again when its lease ends')
          }).finally(() => {
            fanningOut.delete(one)
            // Room again: what could not be claimed for want of it is claimed now.
            if (again) wake()
          })
          fanningOut.add(one)
          return one
        })
        void Promise.all(batch).then(releaseHeads).catch((err: Error) => log.warn({ err: err.message }, 'anvil outbound: releasing keyed heads failed; the next pass tries again'))
        if (claimed.length < room) break
      }
      if (fanningOut.size >= settings.batchSize) again = true
    } while (again && !closed && fanningOut.size < settings.batchSize)
    return found
  }

  function wake (): void {
    if (closed) return
    if (looping !== undefined) {
      again = true
      return
    }
    clearTimeout(followUp)
    looping = loop()
      .then((found) => {
        // Busy: more is likely on its way, and its publisher may not NOTIFY (one per interval).
        if (found > 0 && !closed) followUp = setTimeout(wake, settings.busyPollMs).unref()
      }, (err: Error) => log.warn({ err: err.message }, 'anvil outbound: dispatch pass failed; the next poll tries again'))
      .finally(() => { looping = undefined })
  }

  async function listen (): Promise<void> {
    if (closed) return
    let client: pg.PoolClient | undefined
    try {
      client = await db.pool.connect()
      const held = client
      client.on('notification', wake)
      client.on('error', (err) => {
        // Only the connection still listening is ours to release; a released one is the pool's.
        if (listener !== held) return
        listener = undefined
        log.warn({ err: err.message }, 'anvil outbound: LISTEN connection lost; polling until it is back')
        held.release(err)
        setTimeout(() => { void listen() }, settings.pollIntervalMs).unref()
      })
      await client.query(`LISTEN ${pg.escapeIdentifier(outboxChannel(db.schema))}`)
      listener = client
      if (closed) await stopListening()
    } catch (err) {
      client?.release(err as Error)
      log.warn({ err: (err as Error).message }, 'anvil outbound: cannot LISTEN; polling until it can')
      setTimeout(() => { void listen() }, settings.pollIntervalMs).unref()
    }
  }

  async function stopListening (): Promise<void> {
    const client = listener
    listener = undefined
    if (client === undefined) return
    client.removeAllListeners('notification')
    await client.query('UNLISTEN *').catch(() => {})
    client.release()
  }

  return {
    claim,
    dispatchOnce,
    wake,
    async start () {
      if (timer !== undefined || closed) return
      timer = setInterval(wake, settings.pollIntervalMs)
      timer.unref()
      await listen()
      wake()
    },
    async close () {
      closed = true
      clearInterval(timer)
      clearTimeout(followUp)
      await looping
      await Promise.all(fanningOut)
      await releasing
      await stopListening()
    }
  }
}

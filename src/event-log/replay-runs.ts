/**
 * Bulk replays: a run replays the events a filter matches, oldest first, a page per transaction, paced to a
 * rate, and keeps its progress (count and cursor) in `replay_runs` in the same transaction as each page, so a
 * cancelled or interrupted run resumes where it stopped and replays nothing twice. Cancelling is a state
 * change in the table: a run in another process sees it at its next page.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { errors } from '../shared/errors.js'
import { countEvents } from './event-queries.js'
import { resolveFilter, type EventFilter, type ResolvedFilter } from './event-filter.js'
import { replayPage, type ReplayCursor, type ReplayTarget } from './event-replay.js'
import { pgText } from '../db/pg-text.js'
import * as replayRuns from '../sql/replay-runs.js'

/** Events per page without a rate; with one, a tenth of a second's worth. */
export const MAX_REPLAY_PAGE = 200

export type ReplayRunState = 'running' | 'done' | 'cancelled'

export interface ReplayRunStatus {
  id: string
  matched: number
  replayed: number
  state: ReplayRunState
  /** Why a run stopped on its own, when it did. */
  error?: string
}

function statusOf (row: replayRuns.ReplayRunRow): ReplayRunStatus {
  const status: ReplayRunStatus = { id: row.id, matched: row.matched, replayed: row.replayed, state: row.state }
  if (row.last_error !== null) status.error = row.last_error
  return status
}

export function pageSizeFor (ratePerSecond: number | undefined): number {
  return ratePerSecond === undefined ? MAX_REPLAY_PAGE : Math.max(1, Math.min(MAX_REPLAY_PAGE, Math.ceil(ratePerSecond / 10)))
}

export class ReplayRuns {
  private readonly runs = new Map<string, Promise<void>>()
  private closed = false

  constructor (private readonly target: ReplayTarget) {}

  private get schema (): string { return this.target.db.schema }

  /** How many events a filter would replay now (not those already queued or running). */
  async count (filter: ResolvedFilter): Promise<number> {
    return await countEvents(this.target.db, filter, { replayable: true })
  }

  /** Starts a run in this process; relative times (`2h`) are fixed now, so a resume covers the same events. */
  async start (filter: unknown, ratePerSecond?: number): Promise<{ id: string, matched: number }> {
    const resolved = resolveFilter(filter)
    const stored: EventFilter = { ...(filter as EventFilter), since: resolved.since?.toISOString(), until: resolved.until?.toISOString() }
    const matched = await this.count(resolved)
    const id = randomUUID()
    await this.target.db.pool.query(replayRuns.insert(this.schema),
      [id, JSON.stringify(stored), ratePerSecond ?? null, matched])
    this.launch(id, resolved, ratePerSecond, undefined)
    return { id, matched }
  }

  async get (id: string): Promise<ReplayRunStatus> {
    const { rows } = await this.target.db.pool.query<replayRuns.ReplayRunRow>(replayRuns.byId(this.schema), [id])
    if (rows[0] === undefined) throw new errors.REPLAY_RUN_NOT_FOUND(id)
    return statusOf(rows[0])
  }

  /** Stops a running run at its next page; a finished run is left as it is. */
  async cancel (id: string): Promise<ReplayRunStatus> {
    await this.target.db.pool.query(replayRuns.cancel(this.schema), [id])
    const status = await this.get(id)
    await this.runs.get(id)
    return await this.get(id).catch(() => status)
  }

  /** Continues a cancelled (or interrupted) run from its cursor, in this process. */
  async resume (id: string): Promise<ReplayRunStatus> {
    if (this.runs.has(id)) return await this.get(id)
    const { rows } = await this.target.db.pool.query<replayRuns.ReplayRunRow>(
      replayRuns.resume(this.schema), [id])
    const row = rows[0]
    if (row === undefined) return await this.get(id)
    const cursor = row.cursor_received_at === null ? undefined : { receivedAt: row.cursor_received_at, id: row.cursor_id ?? '' }
    this.launch(id, resolveFilter(row.filter), row.rate_per_second ?? undefined, cursor)
    return statusOf(row)
  }

  /** Resolves when the run this process started (or resumed) stops. */
  async wait (id: string): Promise<ReplayRunStatus> {
    await this.runs.get(id)
    return await this.get(id)
  }

  /** Stops this process's runs after their current page; they stay `running` in the table, to be resumed. */
  async close (): Promise<void> {
    this.closed = true
    await Promise.all(this.runs.values())
  }

  private launch (id: string, filter: ResolvedFilter, rate: number | undefined, cursor: ReplayCursor | undefined): void {
    const done = this.loop(id, filter, rate, cursor).catch(async (err: Error) => {
      await this.target.db.pool.query(replayRuns.fail(this.schema),
        [id, pgText(err.message)]).catch(() => {})
    }).finally(() => this.runs.delete(id))
    this.runs.set(id, done)
  }

  private async loop (id: string, filter: ResolvedFilter, rate: number | undefined, from: ReplayCursor | undefined): Promise<void> {
    const size = pageSizeFor(rate)
    const began = Date.now()
    let sent = 0
    let cursor = from
    while (!this.closed) {
      const page = await replayPage(this.target, filter, cursor, size, async (client, replayed, next) => {
        const { rowCount } = await client.query(replayRuns.advance(this.schema), [id, replayed, next?.receivedAt ?? null, next?.id ?? null])
        return rowCount === 1
      })
      if (page.stopped) return
      cursor = page.cursor
      sent += page.replayed
      if (page.replayed < size) {
        await this.target.db.pool.query(replayRuns.finish(this.schema), [id])
        return
      }
      if (rate !== undefined) {
        const wait = began + (sent / rate) * 1000 - Date.now()
        if (wait > 0) await sleep(wait)
      }
    }
  }
}

/**
 * `anvil events list|show` and `anvil replay --filter`: through the admin API (--url, ANVIL_ADMIN_TOKEN) or
 * straight to PostgreSQL (the journal) and Redis (without a database: the dead letters).
 */
import { SingleBar } from 'cli-progress'
import type { JournalCliConfig } from './config/load-database-config.js'
import { adminClient, type CliEventLog } from './admin-client.js'
import { DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import { errors } from '../src/shared/errors.js'
import type { EventItem } from '../src/event-log/event-queries.js'
import type { EventFilter } from '../src/event-log/event-filter.js'
import type { ReplayRunStatus } from '../src/event-log/replay-runs.js'

/** How often a bulk replay's progress is read. */
export const PROGRESS_POLL_MS = 250
/** The filter's keys as `--filter key=value` names them (`error` is the error class). */
const FILTER_KEYS: Record<string, keyof EventFilter> = {
  provider: 'provider', source: 'source', type: 'type', status: 'status', error: 'errorClass', errorClass: 'errorClass', since: 'since', until: 'until', text: 'text'
}

export async function openCliEventLog (config: JournalCliConfig): Promise<CliEventLog> {
  if (config.admin !== undefined) return adminClient(config.admin)
  const { openEventLog } = await import('../src/event-log/open-event-log.js')
  return openEventLog({
    redis: config.redisUrl ?? DEFAULT_REDIS_URL, database: config.databaseUrl, schema: config.dbSchema, queueName: config.queueName, prefix: config.prefix,
    ...(config.journalQueue === undefined ? {} : { journalQueue: config.journalQueue })
  })
}

/** `--filter status=failed --filter provider=stripe` as a filter; an unknown key is one line naming the known ones. */
export function parseFilterFlags (pairs: readonly string[], keys: Record<string, string> = FILTER_KEYS): EventFilter {
  const filter: Record<string, string> = {}
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    const name = at < 0 ? pair : pair.slice(0, at)
    const key = Object.hasOwn(keys, name) ? keys[name] : undefined
    if (at < 1 || key === undefined) {
      throw new errors.INVALID_FILTER(`--filter takes key=value with a key of ${Object.keys(keys).filter((k) => k !== 'errorClass').join(', ')} (got ${JSON.stringify(pair)})`)
    }
    filter[key] = pair.slice(at + 1)
  }
  return filter
}

/** Every column as wide as its widest value: ids are printed whole, so `events show` takes them as shown. */
export function eventTable (items: readonly EventItem[]): string {
  const head = ['RECEIVED', 'ID', 'PROVIDER', 'TYPE', 'STATUS', 'ATT', 'ERROR']
  const rows = [head, ...items.map((e) => [
    e.receivedAt, e.id, e.provider ?? '-', e.eventType ?? '-', e.status, String(e.attempts), e.errorClass === undefined ? '' : `${e.errorClass}: ${e.lastError ?? ''}`
  ])]
  const widths = head.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0)))
  return rows.map((row) => row.map((text, i) => i === head.length - 1 ? text : text.padEnd(widths[i] ?? 0)).join(' ').trimEnd()).join('\n') + '\n'
}

export async function listEvents (config: JournalCliConfig, filter: EventFilter, options: { json: boolean, limit?: number }): Promise<void> {
  const log = await openCliEventLog(config)
  try {
    const page = await log.list(filter, { limit: options.limit })
    if (options.json) for (const item of page.items) process.stdout.write(JSON.stringify(item) + '\n')
    else process.stdout.write(page.items.length === 0 ? 'no events match\n' : eventTable(page.items))
  } finally {
    await log.close()
  }
}

export async function showEvent (config: JournalCliConfig, id: string): Promise<void> {
  const log = await openCliEventLog(config)
  try {
    process.stdout.write(JSON.stringify(await log.get(id), null, 2) + '\n')
  } finally {
    await log.close()
  }
}

/**
 * A bulk replay with a progress bar on stderr (count, rate, ETA); Ctrl-C cancels the run and waits for it to
 * stop; the last line on stdout is the run's `{ id, matched, replayed, state }` (`{ matched }` for a dry run).
 */
export async function replayMatching (config: JournalCliConfig, filter: EventFilter, options: { dryRun: boolean, rate?: number }): Promise<void> {
  const log = await openCliEventLog(config)
  let stop = (): void => {}
  try {
    if (options.dryRun) {
      process.stdout.write(JSON.stringify({ matched: await log.count(filter) }) + '\n')
      return
    }
    const { id, matched } = await log.startReplay(filter, options.rate)
    const bar = new SingleBar({
      format: 'replaying [{bar}] {value}/{total} | {speed}/s | ETA {eta_formatted}', stream: process.stderr, hideCursor: true
    })
    bar.start(matched, 0, { speed: 0 })
    let interrupted = false
    const onSignal = (): void => { interrupted = true }
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    stop = () => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
    const began = Date.now()
    let status: ReplayRunStatus = { id, matched, replayed: 0, state: 'running' }
    while (status.state === 'running') {
      if (interrupted) {
        status = await log.cancelReplay(id)
        break
      }
      await new Promise((resolve) => setTimeout(resolve, PROGRESS_POLL_MS))
      status = await log.replayStatus(id)
      bar.update(status.replayed, { speed: Math.round(status.replayed / Math.max(0.001, (Date.now() - began) / 1000)) })
    }
    bar.update(status.replayed)
    bar.stop()
    process.stderr.write(`${status.state === 'cancelled' ? 'cancelled: ' : ''}replayed ${status.replayed} of ${status.matched} events (run ${id})\n`)
    process.stdout.write(JSON.stringify(status) + '\n')
  } finally {
    stop()
    await log.close()
  }
}

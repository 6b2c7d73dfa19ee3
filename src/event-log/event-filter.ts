/**
 * Which events a list, a count or a replay takes: the same filter for the journal (its statements' plans in
 * src/sql/webhook-events.ts) and for the dead letters in Redis (as a predicate), from the admin API, the CLI or
 * code. A bad filter is ANVIL_ERR_INVALID_FILTER.
 */
import { Type, type Static } from '@sinclair/typebox'
import { errors } from '../shared/errors.js'
import { compileCheck } from '../shared/validate.js'
import { isTimeInRange, TIME_RANGE_RULE } from '../time/time-range.js'
import { DURATION_RULE, parseDuration } from '../time/duration.js'
import { EVENT_STATUSES, type EventStatus } from './event-item.js'

const STATUS = `(${EVENT_STATUSES.join('|')})`
const TIME_RULE = 'must be an ISO 8601 time (2026-01-31T12:00:00Z) or a duration before now (30m, 2h, 7d)'
const Text = (description: string) => Type.String({ minLength: 1, maxLength: 500, description })

export const EventFilterSchema = Type.Object({
  provider: Type.Optional(Text('the preset that verified it: stripe, github, …')),
  source: Type.Optional(Text('the source name')),
  type: Type.Optional(Text('the event type, exactly')),
  status: Type.Optional(Type.String({
    pattern: `^${STATUS}(,${STATUS})*$`, description: 'one status or several, comma-separated',
    errorMessage: `must be one of ${EVENT_STATUSES.join(', ')}, or several of them comma-separated`
  })),
  errorClass: Type.Optional(Text('the last error\'s class: its code, else its name (journal); the failure reason (dead letters)')),
  since: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'received at or after: an ISO time or a duration before now (2h)' })),
  until: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'received before: an ISO time or a duration before now' })),
  text: Type.Optional(Text('bytes the payload contains (case-sensitive)'))
}, { additionalProperties: false })

export type EventFilter = Static<typeof EventFilterSchema>

/** A filter checked and with its times resolved. */
export interface ResolvedFilter {
  provider?: string
  source?: string
  type?: string
  statuses?: EventStatus[]
  errorClass?: string
  since?: Date
  until?: Date
  text?: string
}

const checkFilter = compileCheck(EventFilterSchema)

function timeOf (name: string, value: string | undefined, now: number): Date | undefined {
  if (value === undefined) return undefined
  // A duration is that long before now. Date.parse takes many shapes; only ISO 8601 dates and times are meant.
  const duration = parseDuration(value)
  const ms = duration !== undefined
    ? now - duration
    : /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) throw new errors.INVALID_FILTER(`${name} ${TIME_RULE} (got ${JSON.stringify(value)})`)
  if (!isTimeInRange(ms)) throw new errors.INVALID_FILTER(`${name} ${TIME_RANGE_RULE} (got ${JSON.stringify(value)})`)
  return new Date(ms)
}

/** A stats window (`24h`) in milliseconds: a duration, as a filter's `since` takes it, reaching back no further than year 1. */
export function statsWindowMs (window: string, now = Date.now()): number {
  const ms = parseDuration(window)
  if (ms === undefined) throw new errors.BAD_REQUEST(`window: must be ${DURATION_RULE} (got ${JSON.stringify(window)})`)
  if (!isTimeInRange(now - ms)) throw new errors.BAD_REQUEST(`window: ${TIME_RANGE_RULE} (got ${JSON.stringify(window)})`)
  return ms
}

/** Checks a filter (from JSON, a query string or flags) and resolves its times against `now`. */
export function resolveFilter (filter: unknown, now = Date.now()): ResolvedFilter {
  const problem = checkFilter(filter ?? {})
  if (problem !== undefined) throw new errors.INVALID_FILTER(problem)
  const f = (filter ?? {}) as EventFilter
  const resolved: ResolvedFilter = {
    provider: f.provider,
    source: f.source,
    type: f.type,
    statuses: f.status === undefined ? undefined : [...new Set(f.status.split(',') as EventStatus[])],
    errorClass: f.errorClass,
    since: timeOf('since', f.since, now),
    until: timeOf('until', f.until, now),
    text: f.text
  }
  if (resolved.since !== undefined && resolved.until !== undefined && resolved.since >= resolved.until) {
    throw new errors.INVALID_FILTER('since must be before until')
  }
  return resolved
}

/** What a dead letter in Redis offers the filter. */
export interface FilterableLetter {
  source: string
  provider?: string
  eventType?: string
  receivedAt: number
  payload: Buffer
  /** Why it failed for good: exhausted, unrecoverable or stalled. */
  reason: string
}

/** The same filter over a dead letter in Redis (whose status is always `dead`). */
export function matchesLetter (filter: ResolvedFilter, letter: FilterableLetter): boolean {
  return (filter.provider === undefined || letter.provider === filter.provider) &&
    (filter.source === undefined || letter.source === filter.source) &&
    (filter.type === undefined || letter.eventType === filter.type) &&
    (filter.statuses === undefined || filter.statuses.includes('dead')) &&
    (filter.errorClass === undefined || letter.reason === filter.errorClass) &&
    (filter.since === undefined || letter.receivedAt >= filter.since.getTime()) &&
    (filter.until === undefined || letter.receivedAt < filter.until.getTime()) &&
    (filter.text === undefined || letter.payload.includes(filter.text))
}

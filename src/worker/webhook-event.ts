import { strictLazyJson } from '../shared/json.js'
import type { WebhookJobData } from '../queue/job-data.js'
import type { EffectFields, JournalDb } from '../journal/effect-scope.js'

export type { JournalDb }

/** The event a handler receives. */
export interface WebhookEvent {
  /** BullMQ job id. */
  id: string
  /** The dedupe key. */
  key: string
  source: string
  provider?: string
  eventId?: string
  eventType?: string
  /**
   * The raw bytes exactly as received; for a preset whose body is a batch (SendGrid), this one event
   * re-serialised as JSON, and `signature` is the whole batch's (it cannot be checked against one event).
   */
  payload: Buffer
  /** The payload parsed as JSON on first call; throws when it is not JSON. */
  json<T = unknown> (): T
  contentType?: string
  signature?: string
  headers: Readonly<Record<string, string>>
  receivedAt: Date
  /** 1 for the first attempt. */
  attempt: number
  /**
   * How many attempts this job has: 1 + the steps of the retry schedule it was accepted with (the schedule
   * is fixed at ingress and travels with the job; a replay starts a fresh budget).
   */
  maxAttempts: number
  /** True on the attempt after which a throw dead-letters the event instead of retrying it. */
  isLastAttempt: boolean
  /** The dead letter this job was replayed from, if it was. */
  replayOf?: string
  /** The id of the request that brought the event, as in the ingress's log lines (a replay keeps it). */
  requestId?: string
  /**
   * With a journal (`journal: { database }`): a `pg` client in this event's transaction, begun on first use
   * and committed with the mark `done`; a throw rolls it back.
   */
  db?: JournalDb
  /** With a journal: runs `fn` once per `action` for this event, whatever the retries and concurrent runs; returns its stored result. */
  once?: EffectFields['once']
  /** With a journal: `{eventId}:{action}`, the idempotency key for an effect outside the database (a downstream API's). */
  effectKey?: EffectFields['effectKey']
  /**
   * With a journal: tags the event with a data subject (a user's id, 1 to 256 characters, no control character),
   * written with its row; `DELETE /admin/subjects/:subject` erases the subject's events (docs/journal.md, "Erasure").
   * Overrides the journal's `subjectPath`.
   */
  subject?: (subject: string) => void
}

export function toEvent (id: string, data: WebhookJobData, attempt: number, maxAttempts: number): WebhookEvent {
  const payload = Buffer.from(data.payload, 'base64')
  const json = strictLazyJson(payload)
  return {
    id,
    key: data.key,
    source: data.source,
    provider: data.provider,
    eventId: data.eventId,
    eventType: data.eventType,
    payload,
    json: <T>() => json() as T,
    contentType: data.contentType,
    signature: data.signature,
    headers: data.headers,
    receivedAt: new Date(data.receivedAt),
    attempt,
    maxAttempts,
    isLastAttempt: attempt >= maxAttempts,
    replayOf: data.replayOf,
    requestId: data.requestId
  }
}

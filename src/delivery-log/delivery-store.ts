import { inTransaction, type Database } from '../db/database.js'
import { deploymentIdOf } from '../queue/deployment.js'
import { storableText } from '../db/storable-text.js'
import * as sql from '../sql/deliveries.js'
import * as endpointsSql from '../sql/endpoints.js'
import * as outboxSql from '../sql/outbox.js'
import { outboxChannel } from '../outbox/publish.js'
import type { EndpointOutcome } from '../sql/endpoints.js'
import type { AttemptReport, AttemptStart, DeliveryAttempt, DeliveryStore, EndpointState, ResumedAttempt, ResumedJob } from '../delivery/delivery-job.js'
import { DEFAULT_RESPONSE_CAP_BYTES } from '../delivery/delivery-options.js'
import type { OutboundScheme } from '../send/sign-outbound.js'
import { endpointEvent, publishOperational } from '../endpoints/operational-events.js'
import { reportAttempt, reportStalledOut } from './report-attempt.js'
import { openAtRest, type EncryptionKeys } from '../at-rest/encryption-keys.js'
import { receiverAuthOf } from '../receiver-auth/receiver-auth-state.js'
import type { StoredTls } from '../receiver-auth/client-tls.js'
import type { StoredOAuth } from '../receiver-auth/oauth-client.js'

export interface RecordedAttempt {
  deliveryId: string
  /** When the endpoint's run of failures began; null after a success. Drives auto-disable. */
  failingSince: Date | null
  /** On a success that ended a run of failures (once per run): when that run began. */
  recoveredFrom?: Date
}

/** What the database knows of an endpoint at delivery time. */
export interface StoredEndpointState extends EndpointState {
  scheme: OutboundScheme
}

/** The delivery store (src/delivery/delivery-job.ts) with every optional member there, as PostgreSQL provides it. */
export interface DatabaseDeliveryStore extends DeliveryStore {
  loadEndpoint (endpointId: string): Promise<StoredEndpointState | undefined>
  /**
   * Writes the attempt (completing its started row), the endpoint's last delivery and the operational events the
   * outcome reports (src/delivery-log/report-attempt.ts) in one transaction.
   */
  recordAttempt (attempt: DeliveryAttempt, report?: AttemptReport): Promise<RecordedAttempt>
  startAttempt (start: AttemptStart): Promise<string>
  resumeAttempt (job: ResumedJob): Promise<ResumedAttempt>
  /** True when this call disabled it (false: already disabled, or gone); `endpoint.disabled` is written with it, unless `operational`. */
  disableEndpoint (endpointId: string, reason: string, operational?: boolean): Promise<boolean>
  /** Drops what the cache holds for an endpoint (after a rotation or an edit in this process). */
  forget (endpointId: string): void
  deployment (): Promise<string>
  /** The key's head at the endpoint goes; the next is made ready and a dispatcher woken to add its job (src/outbox/ordering.ts). */
  releaseOrdered (messageId: string, endpointId: string, orderingKey: string): Promise<void>
}

export const DEFAULT_SECRET_CACHE_MS = 5000

/** What a resumed job reads of its own rows. */
interface JobRow { id: string, attempt: number, status: string, http_status: number | null, error_class: string | null, job_stalls: number | null }

export interface DeliveryStoreOptions {
  /** How long a process reuses an endpoint's secrets before reading them again. @defaultValue 5000 */
  secretCacheMs?: number
  /** The console's address, for the operator's links of operational events. @defaultValue none: no such link */
  consoleUrl?: string
  /** The tenant portal page's address, for the links of a tenant's own operational events. @defaultValue none: no such link */
  portalUrl?: string
  /** Opens the secrets, header values and keys sealed at rest (src/at-rest/encryption-keys.ts). @defaultValue none */
  keys?: EncryptionKeys
}

/** A string cut to at most `bytes` of UTF-8, never in the middle of a character. */
export function cutUtf8 (text: string, bytes: number): string {
  const buffer = Buffer.from(text, 'utf8')
  if (buffer.length <= bytes) return text
  // A cut inside a character decodes to U+FFFD at the end: drop it.
  return buffer.subarray(0, bytes).toString('utf8').replace(/\uFFFD+$/, '')
}

/** Why an attempt's row says `stalled`: its worker stopped mid-POST, or before the POST. */
export const STOPPED_MID_POST = 'the worker stopped during this attempt (killed, or its lock lost): the receiver may have received it'
export const STOPPED_BEFORE_POST = 'the worker stopped before this attempt reached the network'

/** Outside text as the log keeps it: storable, at most `bytes` of UTF-8; null for none. */
const kept = (text: string | undefined, bytes = DEFAULT_RESPONSE_CAP_BYTES): string | null =>
  text === undefined || text === '' ? null : cutUtf8(storableText(text), bytes)

/** Headers as the log keeps them (already capped: src/delivery/attempt-headers.ts), as jsonb; null for none. */
const jsonOrNull = (headers: Record<string, string> | undefined): string | null => headers === undefined ? null : JSON.stringify(storableHeaders(headers))

/** Storable text only in jsonb: a receiver's header holding NUL or a lone surrogate is kept with U+FFFD instead. */
function storableHeaders (headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [storableText(name), storableText(value)]))
}

/** What the delivery worker reads and writes in PostgreSQL. */
export function createDeliveryStore (db: Database, options: DeliveryStoreOptions = {}): DatabaseDeliveryStore {
  const cacheMs = options.secretCacheMs ?? DEFAULT_SECRET_CACHE_MS
  const links = { consoleUrl: options.consoleUrl, portalUrl: options.portalUrl }
  const cache = new Map<string, { until: number, state: Promise<StoredEndpointState | undefined> }>()

  async function read (endpointId: string): Promise<StoredEndpointState | undefined> {
    const { rows } = await db.pool.query<{
      enabled: boolean, scheme: StoredEndpointState['scheme'], rate_limit: number | null, headers: Record<string, string>, secrets: string[] | null,
      tls: StoredTls | null, oauth: StoredOAuth | null
    }>(endpointsSql.deliveryState(db.schema), [endpointId])
    const row = rows[0]
    if (row === undefined) return undefined
    const open = (value: string): string => openAtRest(options.keys, value)
    const headers = Object.fromEntries(Object.entries(row.headers).map(([name, value]) => [name, open(value)]))
    return { enabled: row.enabled, scheme: row.scheme, rateLimit: row.rate_limit, headers, secrets: (row.secrets ?? []).map(open), ...receiverAuthOf(row, options.keys) }
  }

  async function loadEndpoint (endpointId: string): Promise<StoredEndpointState | undefined> {
    const now = Date.now()
    const hit = cache.get(endpointId)
    if (hit !== undefined && hit.until > now) return await hit.state
    const state = read(endpointId)
    cache.set(endpointId, { until: now + cacheMs, state })
    // A failed read is not cached.
    state.catch(() => cache.delete(endpointId))
    return await state
  }

  return {
    loadEndpoint,
    async loadSecrets (endpointId) {
      return (await loadEndpoint(endpointId))?.secrets ?? []
    },
    async startAttempt (start: AttemptStart): Promise<string> {
      const { rows } = await db.pool.query<{ id: string }>(sql.start(db.schema),
        [start.messageId, start.endpointId, start.jobId, start.attempt, start.payloadSha256])
      return String(rows[0]?.id)
    },
    async recordAttempt (attempt: DeliveryAttempt, report?: AttemptReport): Promise<RecordedAttempt> {
      const status = attempt.success ? 'success' : 'failed'
      // The error class and message and the answer's head come from outside: they never fail the write.
      const outcome = [status, attempt.httpStatus ?? null, Math.max(0, Math.round(attempt.durationMs)), kept(attempt.errorClass, 200),
        kept(attempt.errorMessage), kept(attempt.responseHead), jsonOrNull(attempt.requestHeaders), jsonOrNull(attempt.responseHeaders)]
      return await inTransaction(db.pool, async (client) => {
        // The row written before the POST gets its outcome; without one (retention took it, or a resumed run marked it
        // stalled while this one still ran), a row of its own.
        const { rows } = attempt.deliveryId === undefined
          ? { rows: [] }
          : await client.query<{ id: string }>(sql.complete(db.schema), [attempt.deliveryId, ...outcome])
        const inserted = rows.length > 0
          ? rows
          : (await client.query<{ id: string }>(sql.insertOutcome(db.schema), [...outcome, attempt.messageId, attempt.endpointId, attempt.attempt, attempt.payloadSha256])).rows
        if (attempt.success) await client.query(sql.resolvePair(db.schema), [attempt.messageId, attempt.endpointId])
        // The row locked first: of two successes at once, only the first sees the run of failures it ends.
        const reported = report !== undefined && !report.operational
        const updated = await client.query<EndpointOutcome>(
          endpointsSql.recordDelivery(db.schema), [attempt.endpointId, status, reported, report?.circuitOpened ?? false])
        const row = updated.rows[0]
        if (reported && row !== undefined) await reportAttempt(client, db.schema, links, attempt, report, row)
        const recovered = attempt.success && row?.was_failing_since instanceof Date ? { recoveredFrom: row.was_failing_since } : {}
        return { deliveryId: String(inserted[0]?.id), failingSince: row?.failing_since ?? null, ...recovered }
      })
    },
    async resumeAttempt (job: ResumedJob): Promise<ResumedAttempt> {
      return await inTransaction(db.pool, async (client) => {
        const { rows } = await client.query<JobRow>(sql.ofJob(db.schema), [job.messageId, job.endpointId, job.jobId])
        // Stalls a row accounts for: a stalled row one at least, and a row settled or written after a stall says how many.
        const seen = Math.max(rows.filter((row) => row.error_class === 'stalled').length, ...rows.map((row) => row.job_stalls ?? 0))
        // This attempt's outcome, if a run of it logged one before its worker stopped.
        const decided = rows.filter((row) => row.attempt === job.attempt && row.status !== 'started').pop()
        // Attempts of this job left started are over: no run of it is left to complete them (a stall, or a lost write).
        const settled = await client.query<{ attempt: number }>(sql.settleStarted(db.schema), [job.jobId, STOPPED_MID_POST, job.stalls])
        const delivered = (await client.query(sql.deliveredSince(db.schema), [job.messageId, job.endpointId, job.since])).rows.length > 0
        if (job.stalls <= seen) return { stalled: false, delivered }
        const exhausted = job.exhausted !== undefined && !job.exhausted.operational && !delivered ? job.exhausted : undefined
        if (decided !== undefined) {
          // The stall came after this attempt's outcome was logged: that outcome is the attempt's, and no row is added.
          await client.query(sql.accountStalls(db.schema), [decided.id, job.stalls])
          const outcome = { status: decided.status as 'success' | 'failed', httpStatus: decided.http_status, errorClass: decided.error_class }
          if (exhausted !== undefined && outcome.status === 'failed') {
            await reportStalledOut(client, db.schema, links, job, exhausted.eventType, { httpStatus: outcome.httpStatus, errorClass: outcome.errorClass })
          }
          return { stalled: false, delivered, decided: outcome }
        }
        // A stall before the POST left no row: one for the attempt, whatever number of stalls it took.
        if (!settled.rows.some((row) => row.attempt === job.attempt)) {
          await client.query(sql.insertStall(db.schema), [job.messageId, job.endpointId, job.jobId, job.attempt, STOPPED_BEFORE_POST, job.payloadSha256, job.stalls])
        }
        // A stall that was the job's last attempt: its attempts ran out, reported with the stall's row.
        if (exhausted !== undefined) await reportStalledOut(client, db.schema, links, job, exhausted.eventType)
        return { stalled: true, delivered }
      })
    },
    async disableEndpoint (endpointId, reason, operational = false) {
      cache.delete(endpointId)
      return await inTransaction(db.pool, async (client) => {
        const { rows } = await client.query<{ tenant: string | null, url: string, description: string, updated_at: Date }>(endpointsSql.disable(db.schema), [endpointId, reason])
        const row = rows[0]
        if (row === undefined) return false
        // The UPDATE … WHERE enabled decides: one call disables, and reports it, however many workers try.
        if (!operational) {
          await publishOperational(client, db.schema,
            endpointEvent('endpoint.disabled', { id: endpointId, url: row.url, description: row.description, tenant: row.tenant }, links,
              { reason, disabledAt: row.updated_at.toISOString() }))
        }
        return true
      })
    },
    forget (endpointId) {
      cache.delete(endpointId)
    },
    async releaseOrdered (messageId, endpointId, orderingKey) {
      await inTransaction(db.pool, async (client) => {
        await client.query(outboxSql.lockOrderedPair(), [endpointId, orderingKey])
        await client.query(outboxSql.releaseOrdered(db.schema), [messageId, endpointId, orderingKey, outboxChannel(db.schema)])
      })
    },
    async deployment () {
      return await deploymentIdOf(db)
    }
  }
}

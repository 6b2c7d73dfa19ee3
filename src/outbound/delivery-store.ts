import { inTransaction, type Database } from '../db/database.js'
import type { DeliveryAttempt } from './delivery/delivery-job.js'
import { DEFAULT_RESPONSE_CAP_BYTES } from './delivery/delivery-options.js'
import type { DatabaseDeliveryStore, RecordedAttempt, StoredEndpointState } from './outbound-job.js'

export const DEFAULT_SECRET_CACHE_MS = 5000

export interface DeliveryStoreOptions {
  /** How long a process reuses an endpoint's secrets before reading them again. @defaultValue 5000 */
  secretCacheMs?: number
}

/** A string cut to at most `bytes` of UTF-8, never in the middle of a character. */
export function cutUtf8 (text: string, bytes: number): string {
  const buffer = Buffer.from(text, 'utf8')
  if (buffer.length <= bytes) return text
  // A cut inside a character decodes to U+FFFD at the end: drop it.
  return buffer.subarray(0, bytes).toString('utf8').replace(/\uFFFD+$/, '')
}

/** What the delivery worker reads and writes in PostgreSQL (INTERFACE.md). */
export function createDeliveryStore (db: Database, options: DeliveryStoreOptions = {}): DatabaseDeliveryStore {
  const cacheMs = options.secretCacheMs ?? DEFAULT_SECRET_CACHE_MS
  const cache = new Map<string, { until: number, state: Promise<StoredEndpointState | undefined> }>()
  const endpoints = db.table('endpoints')
  const secrets = db.table('endpoint_secrets')
  const deliveries = db.table('deliveries')

  async function read (endpointId: string): Promise<StoredEndpointState | undefined> {
    const { rows } = await db.pool.query<{ enabled: boolean, scheme: StoredEndpointState['scheme'], rate_limit: number | null, secrets: string[] | null }>(
      `SELECT e.enabled, e.scheme, e.rate_limit,
         (SELECT array_agg(s.secret ORDER BY s.created_at DESC) FROM ${secrets} s
          WHERE s.endpoint_id = e.id AND (s.expires_at IS NULL OR s.expires_at > now())) AS secrets
       FROM ${endpoints} e WHERE e.id = $1`, [endpointId])
    const row = rows[0]
    return row === undefined ? undefined : { enabled: row.enabled, scheme: row.scheme, rateLimit: row.rate_limit, secrets: row.secrets ?? [] }
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
    async recordAttempt (attempt: DeliveryAttempt): Promise<RecordedAttempt> {
      return await inTransaction(db.pool, async (client) => {
        const { rows } = await client.query<{ id: string }>(
          `INSERT INTO ${deliveries} (message_id, endpoint_id, attempt, status, http_status, duration_ms, error_class, error,
             response_head, payload_sha256) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
          [attempt.messageId, attempt.endpointId, attempt.attempt, attempt.success ? 'success' : 'failed', attempt.httpStatus ?? null,
            Math.max(0, Math.round(attempt.durationMs)), attempt.errorClass ?? null, attempt.errorMessage ?? null,
            attempt.responseHead === '' ? null : cutUtf8(attempt.responseHead, DEFAULT_RESPONSE_CAP_BYTES), attempt.payloadSha256])
        // The row locked first: of two successes at once, only the first sees the run of failures it ends.
        const updated = await client.query<{ failing_since: Date | null, was_failing_since: Date | null }>(
          `UPDATE ${endpoints} e SET last_delivery_at = now(), last_delivery_status = $2,
             failing_since = CASE WHEN $2 = 'success' THEN NULL ELSE coalesce(old.failing_since, now()) END
           FROM (SELECT id, failing_since FROM ${endpoints} WHERE id = $1 FOR UPDATE) old
           WHERE e.id = old.id RETURNING e.failing_since, old.failing_since AS was_failing_since`, [attempt.endpointId, attempt.success ? 'success' : 'failed'])
        const row = updated.rows[0]
        const recovered = attempt.success && row?.was_failing_since instanceof Date ? { recoveredFrom: row.was_failing_since } : {}
        return { deliveryId: String(rows[0]?.id), failingSince: row?.failing_since ?? null, ...recovered }
      })
    },
    async disableEndpoint (endpointId, reason) {
      cache.delete(endpointId)
      const { rowCount } = await db.pool.query(
        `UPDATE ${endpoints} SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1 AND enabled`, [endpointId, reason])
      return rowCount === 1
    },
    forget (endpointId) {
      cache.delete(endpointId)
    }
  }
}

/**
 * The delivery worker's store as the product runs it (src/delivery-log/delivery-store.ts, PostgreSQL), in a schema
 * of its own per test, with the few reads and writes a test needs to set endpoints up and see the delivery log.
 */
import { openDatabase, type Database } from '../../src/db/database.js'
import { migrate } from '../../src/db/migrate.js'
import { createDeliveryStore, type DatabaseDeliveryStore } from '../../src/delivery-log/delivery-store.js'
import type { DeliveryAttempt } from '../../src/delivery/delivery-job.js'
import { TestDatabase } from './pg.js'

let schemas = 0

export type LoggedAttempt = DeliveryAttempt & { at: number }

export class PgDeliveryStore {
  private constructor (readonly store: DatabaseDeliveryStore, private readonly db: Database) {}

  /** A fresh schema in `database`, migrated; its pool ends when the database is dropped. */
  static async create (database: TestDatabase): Promise<PgDeliveryStore> {
    const db = openDatabase(database.pool(), { schema: `delivery_${process.pid}_${++schemas}` })
    await migrate(db)
    return new PgDeliveryStore(createDeliveryStore(db), db)
  }

  /**
   * This schema emptied (all but its migrations' record and its deployment row) with a store of its own (an empty
   * secret cache): tests that run one after another share one migrated schema instead of migrating one each.
   */
  async fresh (): Promise<PgDeliveryStore> {
    const { rows } = await this.db.pool.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename NOT IN ('schema_migrations', 'deployment')", [this.db.schema])
    await this.db.pool.query(`TRUNCATE ${rows.map((row) => this.db.table(row.name)).join(', ')} CASCADE`)
    return new PgDeliveryStore(createDeliveryStore(this.db), this.db)
  }

  async add (id: string, secrets: string[], extra: { rateLimit?: number, failingSince?: Date } = {}): Promise<void> {
    await this.db.pool.query(`INSERT INTO ${this.db.table('endpoints')} (id, url, rate_limit, failing_since) VALUES ($1, 'http://127.0.0.1/', $2, $3)`,
      [id, extra.rateLimit ?? null, extra.failingSince ?? null])
    for (const [i, secret] of secrets.entries()) {
      await this.db.pool.query(`INSERT INTO ${this.db.table('endpoint_secrets')} (endpoint_id, secret, created_at) VALUES ($1, $2, now() - make_interval(secs => $3))`,
        [id, secret, i])
    }
  }

  /** The delivery log's rows for an endpoint (all of them without one), oldest first. */
  async attempts (endpointId?: string): Promise<LoggedAttempt[]> {
    const { rows } = await this.db.pool.query(`SELECT * FROM ${this.db.table('deliveries')} WHERE $1::text IS NULL OR endpoint_id = $1 ORDER BY id`, [endpointId ?? null])
    return rows.map((row) => ({
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      attempt: row.attempt,
      success: row.status === 'success',
      ...(row.http_status === null ? {} : { httpStatus: row.http_status }),
      durationMs: row.duration_ms,
      ...(row.error_class === null ? {} : { errorClass: row.error_class }),
      ...(row.error === null ? {} : { errorMessage: row.error }),
      responseHead: row.response_head ?? '',
      payloadSha256: row.payload_sha256,
      at: (row.created_at as Date).getTime()
    }))
  }

  async enabled (endpointId: string): Promise<boolean | undefined> {
    const { rows } = await this.db.pool.query(`SELECT enabled FROM ${this.db.table('endpoints')} WHERE id = $1`, [endpointId])
    return rows[0]?.enabled
  }
}

/**
 * The audit of erasures: who asked, when, what each removed. A subject is kept only as its SHA-256, so the audit
 * of an erasure does not keep the identifier it erased; whoever knows the subject can still find its entry.
 */
import { createHash } from 'node:crypto'
import type { Database } from '../db/database.js'
import { decodeCursor } from '../paging/cursor.js'
import { outboundPageSize } from '../paging/outbound-page-size.js'
import { toPage, type Page } from '../paging/page.js'
import * as sql from '../sql/erasure/erasure-audit.js'
import type { ErasureAudit } from './erasure-schemas.js'

/** How the audit names a subject. */
export const subjectTarget = (subject: string): string => `sha256:${createHash('sha256').update(subject, 'utf8').digest('hex')}`

/** How the audit names an admin token: not the token, a short digest of it that tells tokens apart. */
export const adminTokenActor = (token: string): string => `admin:${createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 12)}`

export interface ErasureAuditLog {
  record (action: ErasureAudit['action'], target: string, actor: string, counts: Record<string, number>): Promise<ErasureAudit>
  /** Newest first. */
  page (options?: { limit?: number, cursor?: string }): Promise<Page<ErasureAudit>>
}

const shape = (row: sql.ErasureAuditRow): ErasureAudit => ({ ...row, at: row.at.toISOString() })

export function createErasureAudit (db: Database): ErasureAuditLog {
  return {
    async record (action, target, actor, counts) {
      const { rows } = await db.pool.query<sql.ErasureAuditRow>(sql.insert(db.schema), [action, target, actor, JSON.stringify(counts)])
      return shape(rows[0] as sql.ErasureAuditRow)
    },
    async page ({ limit, cursor } = {}) {
      const size = outboundPageSize(limit)
      const before = cursor === undefined ? null : decodeCursor(cursor, ['string'])[0]
      const { rows } = await db.pool.query<sql.ErasureAuditRow>(sql.page(db.schema), [before, size + 1])
      return toPage(rows, size, (row) => [row.id], shape)
    }
  }
}

/**
 * Erasure in the inbound journal: the events of a subject, a batch at a time, with their failure log rows, their
 * effects, their rows in the PostgreSQL queue and their jobs in Redis (dead letters and jobs still queued).
 */
import type { ErasureAuditLog } from './erasure-audit.js'
import type { SubjectErasure } from './erasure-schemas.js'

export type JournalSubjectCounts = Pick<SubjectErasure, 'events' | 'eventAttempts' | 'eventJobs'>

export interface JournalErasure {
  subject (subject: string): Promise<JournalSubjectCounts>
  /** The audit in the journal's database, for a deployment without outgoing webhooks. */
  audit: ErasureAuditLog
}

/**
 * Erasure across the features that keep a subject's data: the outgoing side (src/erasure/outbound-erasure.ts) and
 * the inbound journal (src/erasure/journal-erasure.ts), each when it is there, then one audit entry with the counts.
 * Each side works in batches; a call that finds nothing answers zeros and is audited too.
 */
import type { ErasureAuditLog } from './erasure-audit.js'
import { subjectTarget } from './erasure-audit.js'
import type { OutboundErasure } from './outbound-erasure.js'
import type { JournalErasure } from './journal-erasure.js'
import type { ErasureAudit, SubjectErasure, TenantRemoval } from './erasure-schemas.js'

export interface Erasers {
  outbound?: OutboundErasure
  journal?: JournalErasure
  audit: ErasureAuditLog
}

export async function eraseSubject ({ outbound, journal, audit }: Erasers, subject: string, actor: string): Promise<SubjectErasure & { audit: ErasureAudit }> {
  const out = await outbound?.subject(subject) ?? { messages: 0, pendingMessages: 0, deliveries: 0, jobs: 0, jobsInFlight: 0 }
  const inbound = await journal?.subject(subject) ?? { events: 0, eventAttempts: 0, eventJobs: 0 }
  const counts = { ...out, ...inbound }
  return { subject, ...counts, audit: await audit.record('subject', subjectTarget(subject), actor, counts) }
}

export async function removeTenant ({ outbound, audit }: Erasers, tenant: string, actor: string): Promise<TenantRemoval & { audit: ErasureAudit }> {
  const counts = await outbound?.tenant(tenant) ?? { endpoints: 0, messages: 0, deliveries: 0, jobs: 0, jobsInFlight: 0, portalLinkCodes: 0 }
  return { tenant, ...counts, audit: await audit.record('tenant', tenant, actor, counts) }
}

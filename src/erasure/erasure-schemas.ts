/** What erasure takes and answers: a subject, the counts of a subject's erasure and of a tenant's removal, an audit entry. */
import { Type, type Static } from '@sinclair/typebox'

/** Rows a batch of an erasure takes: its locks and its Redis round trips stay short, so the rest goes on meanwhile. */
export const DEFAULT_ERASURE_BATCH = 200

/** A data subject: a user's id, an e-mail address; any text but control characters. */
export const Subject = () => Type.String({ pattern: '^[^\\u0000-\\u001F\\u007F]{1,256}$', errorMessage: 'must be 1 to 256 characters, none of them a control character' })

/** What `DELETE /admin/subjects/:subject` erased, each a count (0 when there was nothing, as on a second call). */
export const SubjectErasureSchema = Type.Object({
  subject: Type.String(),
  /** Outbox messages of the subject deleted, of which `pendingMessages` were not dispatched yet. */
  messages: Type.Integer(),
  pendingMessages: Type.Integer(),
  /** Delivery-log rows whose bodies were erased (the rows stay, marked `erasedAt`). */
  deliveries: Type.Integer(),
  /** Delivery jobs removed from Redis (waiting, delayed, retrying or failed). */
  jobs: Type.Integer(),
  /** Delivery jobs running at the time: their attempt ends and is logged; call again to erase its row. */
  jobsInFlight: Type.Integer(),
  /** Inbound events of the subject deleted from the journal, with their failure log rows and effects. */
  events: Type.Integer(),
  eventAttempts: Type.Integer(),
  /** The events' jobs removed from Redis (dead letters, and jobs still queued). */
  eventJobs: Type.Integer()
})
export type SubjectErasure = Static<typeof SubjectErasureSchema>

/** What `DELETE /admin/tenants/:tenant` removed. */
export const TenantRemovalSchema = Type.Object({
  tenant: Type.String(),
  endpoints: Type.Integer(),
  messages: Type.Integer(),
  deliveries: Type.Integer(),
  jobs: Type.Integer(),
  jobsInFlight: Type.Integer(),
  /** Portal link codes deleted; every portal token of the tenant issued before now is revoked besides. */
  portalLinkCodes: Type.Integer()
})
export type TenantRemoval = Static<typeof TenantRemovalSchema>

/** An erasure as the audit keeps it: a subject only as its SHA-256 (`sha256:<hex>`), so the audit holds no subject. */
export const ErasureAuditSchema = Type.Object({
  id: Type.String(),
  action: Type.Union([Type.Literal('subject'), Type.Literal('tenant')]),
  target: Type.String(),
  /** `admin:<first 12 hex of the admin token's SHA-256>`, `console` (a console session) or `cli` (the CLI on the database). */
  actor: Type.String(),
  at: Type.String({ format: 'date-time' }),
  counts: Type.Record(Type.String(), Type.Integer())
})
export type ErasureAudit = Static<typeof ErasureAuditSchema>

/**
 * The operational events an attempt's outcome reports, written in the attempt's transaction, after its
 * endpoint's row was updated under a lock: the transitions that row shows are each seen by one transaction, so
 * several workers report each once. `endpoint.failing` when the circuit's opening first reaches the row,
 * `endpoint.recovered` on the first success after it, `message.exhausted` on a job's last failed attempt (or
 * its last stall, with the stall's rows).
 */
import type pg from 'pg'
import type { AttemptReport, DeliveryAttempt, ResumedJob } from '../delivery/delivery-job.js'
import * as sql from '../sql/endpoints.js'
import type { EndpointOutcome, EndpointRow } from '../sql/endpoints.js'
import {
  consoleLink, endpointEvent, endpointFields, operationalId, publishOperational, type EndpointFacts, type OperationalEvent, type OperationalLinks
} from '../endpoints/operational-events.js'

const iso = (date: Date | null): string | null => date === null ? null : date.toISOString()

export async function reportAttempt (
  client: pg.ClientBase, schema: string, links: OperationalLinks, attempt: DeliveryAttempt, report: AttemptReport, row: EndpointOutcome
): Promise<void> {
  const { endpointId, messageId } = attempt
  const endpoint: EndpointFacts = { id: endpointId, url: row.url, description: row.description, tenant: row.tenant }
  const last = { messageId, attempt: attempt.attempt, httpStatus: attempt.httpStatus ?? null, errorClass: attempt.errorClass ?? null }
  if (!attempt.success && row.was_circuit_opened_at === null && row.circuit_opened_at !== null) {
    await publishOperational(client, schema, endpointEvent('endpoint.failing', endpoint, links,
      { circuitOpenedAt: iso(row.circuit_opened_at), failingSince: iso(row.failing_since), lastAttempt: last }))
  }
  if (attempt.success && row.was_circuit_opened_at !== null) {
    await publishOperational(client, schema, endpointEvent('endpoint.recovered', endpoint, links,
      { circuitOpenedAt: iso(row.was_circuit_opened_at), failingSince: iso(row.was_failing_since), recoveredAt: new Date().toISOString() }))
  }
  if (report.exhausted && !attempt.success) {
    await publishOperational(client, schema, exhaustedEvent(links, endpoint, { messageId, eventType: report.eventType, attempts: attempt.attempt },
      { httpStatus: last.httpStatus, errorClass: last.errorClass, error: attempt.errorMessage ?? null }, report.jobId))
  }
}

/**
 * A job whose last attempt stalled (its worker died mid-delivery), or that BullMQ failed for its stalls: `message.exhausted`,
 * with the endpoint's tenant; `last`, when the attempt had logged its outcome before the stall.
 */
export async function reportStalledOut (
  client: pg.ClientBase, schema: string, links: OperationalLinks, job: ResumedJob, eventType: string, last?: { httpStatus: number | null, errorClass: string | null }
): Promise<void> {
  const { rows } = await client.query<EndpointRow>(sql.byId(schema), [job.endpointId])
  const row = rows[0]
  const endpoint: EndpointFacts = { id: job.endpointId, url: row?.url ?? '', description: row?.description ?? '', tenant: row?.tenant ?? null }
  await publishOperational(client, schema, exhaustedEvent(links, endpoint, { messageId: job.messageId, eventType, attempts: job.attempt },
    last === undefined ? { httpStatus: null, errorClass: 'stalled', error: 'the worker stopped during this attempt' } : { ...last, error: null }, job.jobId))
}

/**
 * `message.exhausted`: the message, the endpoint it did not reach, and a link to the message in the console (it goes
 * to operators only). Its id is its job's: whichever run reports a job's exhaustion, and however often, it is one message.
 */
function exhaustedEvent (
  links: OperationalLinks, endpoint: EndpointFacts, what: { messageId: string, eventType: string, attempts: number },
  lastAttempt: { httpStatus: number | null, errorClass: string | null, error: string | null }, jobId: string | undefined
): OperationalEvent {
  return {
    ...(jobId === undefined ? {} : { id: operationalId('exhausted', jobId) }),
    type: 'message.exhausted',
    tenant: endpoint.tenant,
    data: {
      messageId: what.messageId, ...endpointFields(endpoint), eventType: what.eventType, attempts: what.attempts, lastAttempt,
      link: consoleLink(links, `/messages/${encodeURIComponent(what.messageId)}`)
    }
  }
}

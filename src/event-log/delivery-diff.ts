/**
 * How a delivery of an event id differs from the one before it (a provider that sends an id again may send
 * other bytes): the changed JSON fields by path, or only that the bytes changed, and the changed headers.
 */
import { jsonView } from '../db/json-view.js'
import type { Change, DeliveryDiff } from './event-detail.js'

const MAX_CHANGES = 100

function jsonChanges (before: unknown, after: unknown, path: string, out: Change[]): void {
  if (out.length >= MAX_CHANGES) return
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null
  if (isObject(before) && isObject(after) && Array.isArray(before) === Array.isArray(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      jsonChanges(before[key], after[key], path === '' ? key : `${path}.${key}`, out)
    }
    return
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) out.push({ path: path === '' ? '$' : path, before, after })
}

/** The delivery before, as the diff reads it: a row of the same id received earlier. */
export function previousDelivery (row: { payload: Buffer, headers: Record<string, string>, received_at: Date, job_id: string | null }): Record<string, unknown> {
  return { payload: row.payload.toString('base64'), headers: row.headers, receivedAt: row.received_at, jobId: row.job_id }
}

export function deliveryDiff (
  previous: Record<string, unknown>, current: { payload: Buffer, headers: Record<string, string> }
): DeliveryDiff | undefined {
  const before = Buffer.from(typeof previous.payload === 'string' ? previous.payload : '', 'base64')
  const payloadChanged = !before.equals(current.payload)
  const changes: Change[] = []
  if (payloadChanged) {
    const a = jsonView(before)
    const b = jsonView(current.payload)
    if (a !== null && b !== null) jsonChanges(JSON.parse(a), JSON.parse(b), '', changes)
  }
  const oldHeaders = (previous.headers ?? {}) as Record<string, string>
  const headers: Change[] = []
  for (const name of new Set([...Object.keys(oldHeaders), ...Object.keys(current.headers)])) {
    if (oldHeaders[name] !== current.headers[name]) headers.push({ path: name, before: oldHeaders[name], after: current.headers[name] })
  }
  if (!payloadChanged && headers.length === 0) return undefined
  return { receivedAt: previous.receivedAt, jobId: previous.jobId, payloadChanged, changes, headers }
}

/**
 * An event as lists show it, and its statuses: no imports, so the console (console/src) takes these very
 * declarations instead of copying them.
 */

/** What a row's status may be; `dead` once no attempt is left. */
export const EVENT_STATUSES = ['received', 'processing', 'done', 'failed', 'dead'] as const
export type EventStatus = (typeof EVENT_STATUSES)[number]

/** An event in a list: the shape scripts rely on. */
export interface EventItem {
  id: string
  source: string
  provider: string | null
  eventType: string | null
  status: EventStatus
  attempts: number
  receivedAt: string
  lastError?: string
  errorClass?: string
}

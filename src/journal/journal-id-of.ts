import type { WebhookJobData } from '../queue/job-data.js'

/** The journal's id of an event: the provider's event id where there is one, else the dedupe key. */
export function journalIdOf (data: Pick<WebhookJobData, 'eventId' | 'key'>): string {
  return data.eventId ?? data.key
}

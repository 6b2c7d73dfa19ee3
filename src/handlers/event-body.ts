import type { WebhookEvent } from '../worker/webhook-event.js'

/** Providers whose form-encoded bodies carry their JSON in a `payload` field (GitHub's form hooks, Slack interactivity). */
const JSON_IN_FORM: ReadonlySet<string> = new Set(['github', 'slack'])

const isForm = (contentType: string | undefined): boolean =>
  (contentType ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')

/**
 * The body as a handler sees it in `event.data`: JSON, or for a form-encoded body its fields (the first value
 * of a repeated one), or the JSON in its `payload` field for GitHub and Slack. Throws when it is neither.
 */
export function parseEventBody (event: WebhookEvent): unknown {
  if (!isForm(event.contentType)) return event.json()
  const form = new URLSearchParams(event.payload.toString('utf8'))
  const inner = form.get('payload')
  if (inner !== null && JSON_IN_FORM.has(event.provider ?? '')) return JSON.parse(inner)
  const fields: Record<string, string> = {}
  for (const [name, value] of form) fields[name] ??= value
  return fields
}

/** The effects handlers applied once (`event.once()`), one row a key; they go with their event. */
import { qualify } from './qualify.js'

/** An event's effects, oldest first: `$1` event. */
export const ofEvent = (schema: string): string =>
  `SELECT action, key, result, created_at FROM ${qualify(schema, 'webhook_effects')} WHERE event_id = $1 ORDER BY created_at, key`

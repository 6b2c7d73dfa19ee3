/**
 * A sample handler module for `anvil worker --handler ./examples/handler.js`.
 *
 * The worker calls the default export (or a named `handler` export) once per event. Return to mark the
 * event done; throw to retry it on the retry schedule (ANVIL_RETRY_SCHEDULE), after which it is
 * dead-lettered and can be replayed with `anvil replay`. Throw bullmq's UnrecoverableError to
 * dead-letter at once. Delivery is at least once: make the work idempotent (key it on event.id).
 */
export default async function handler (event) {
  // event.payload holds the raw bytes; json() parses them (and throws, so the event is retried, when they are not JSON).
  const body = event.contentType?.startsWith('application/json') ? event.json() ?? {} : {}
  // One JSON line per event on stdout, next to the worker's own log lines.
  console.log(JSON.stringify({
    handled: event.id,
    eventId: event.eventId ?? body.id,
    type: event.eventType ?? body.type,
    attempt: event.attempt,
    bytes: event.payload.length
  }))
}

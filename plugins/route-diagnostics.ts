import type { FastifyError, FastifyInstance } from 'fastify'
import { publish, rejectionReason, type EventLabels } from '../src/diagnostics.js'

/**
 * Publishes what the webhook route sees at the HTTP level: every request (also those refused before the
 * handler runs, like a 413), every refusal with its reason, and every answer with its latency. The core
 * (src/ingress.ts) publishes verification and enqueueing.
 */
export function instrumentWebhookRoute (route: FastifyInstance, labels: EventLabels): void {
  route.addHook('onRequest', async () => { publish('received', () => labels) })
  route.addHook('onError', async (_request, _reply, error: FastifyError) => {
    const reason = rejectionReason(error.code, error.statusCode ?? 500)
    if (reason !== undefined) publish('rejected', () => ({ ...labels, reason }))
  })
  route.addHook('onResponse', async (_request, reply) => {
    publish('responded', () => ({ ...labels, statusCode: reply.statusCode, durationMs: reply.elapsedTime }))
  })
}

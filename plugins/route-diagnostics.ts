import type { FastifyError, FastifyInstance } from 'fastify'
import { publish, rejectionReason, type EventLabels } from '../src/shared/diagnostics.js'
import { clientGone } from './client-gone.js'

/**
 * Publishes what the webhook route sees at the HTTP level: every request (also those refused before the
 * handler runs, like a 413), every refusal with its reason, and every answer with its latency. The core
 * (src/inbound/ingress.ts) publishes verification and enqueueing.
 */
export function instrumentWebhookRoute (route: FastifyInstance, labels: EventLabels): void {
  // Callback hooks: on every request of the hot path, an async hook would cost a promise each.
  route.addHook('onRequest', (_request, _reply, done) => {
    publish('received', () => labels)
    done()
  })
  route.addHook('onError', (request, _reply, error: FastifyError, done) => {
    const reason = clientGone(request, error) ?? rejectionReason(error.code, error.statusCode ?? 500)
    if (reason !== undefined) publish('rejected', () => ({ ...labels, reason, code: error.code }))
    done()
  })
  route.addHook('onResponse', (_request, reply, done) => {
    publish('responded', () => ({ source: labels.source, provider: labels.provider, statusCode: reply.statusCode, durationMs: reply.elapsedTime }))
    done()
  })
}

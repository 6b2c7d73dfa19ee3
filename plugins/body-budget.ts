import type { FastifyInstance } from 'fastify'
import { errors } from '../src/shared/errors.js'

/**
 * A cap on the bytes of request bodies being read at once on some routes, by their declared Content-Length
 * (`bodyLimit` when none is declared: a chunked body may grow to it). A request past the cap is refused
 * with ANVIL_ERR_BUSY (503) before its body is read; its bytes are given back when its response closes,
 * whether it finished, failed or the connection dropped.
 */
export class BodyBudget {
  private used = 0

  constructor (readonly maxBytes: number, private readonly bodyLimit: number) {}

  get bytesInFlight (): number { return this.used }

  /** Counts the routes of `route` (an encapsulated context) against the budget. */
  guard (route: FastifyInstance): void {
    route.addHook('onRequest', (request, reply, done) => {
      const declared = Number(request.headers['content-length'])
      const bytes = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, this.bodyLimit) : this.bodyLimit
      if (this.used + bytes > this.maxBytes) {
        // The unread body is not drained for a next request on this connection: it is closed after the answer.
        void reply.header('connection', 'close')
        done(new errors.BUSY())
        return
      }
      this.used += bytes
      reply.raw.once('close', () => { this.used -= bytes })
      done()
    })
  }
}

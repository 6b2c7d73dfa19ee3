import type { Socket } from 'node:net'
import type { Server } from 'node:http'
import type { FastifyError, FastifyRequest } from 'fastify'

/** Sockets the server closed because their request was not complete within its request timeout. */
const timedOut = new WeakSet<Socket>()
const watched = new WeakSet<Server>()

/**
 * Marks the sockets Node's request timeout closes (Fastify has then written the 408), so that the body read
 * those sockets break can be told apart from a client that left. Once per server, however many apps use it.
 */
export function watchRequestTimeouts (server: Server): void {
  if (watched.has(server)) return
  watched.add(server)
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') timedOut.add(socket)
  })
}

/**
 * `timeout` or `aborted` when the request's body stopped because its connection closed (Node reports
 * ECONNRESET "aborted" for both), else undefined: the request itself was at fault.
 */
export function clientGone (request: FastifyRequest, err: FastifyError): 'timeout' | 'aborted' | undefined {
  if (err.code !== 'ECONNRESET') return undefined
  return timedOut.has(request.raw.socket) ? 'timeout' : 'aborted'
}

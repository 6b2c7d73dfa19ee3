/**
 * A hostile client on a real TCP socket: it sends a request's headers and part of its body, then goes
 * silent (or drops the connection). What the server sends back, and when it closes, are recorded.
 */
import { connect, type Socket } from 'node:net'

export interface RawClient {
  socket: Socket
  /** Everything the server sent. */
  received: () => string
  /** Resolves once the server (or the client) closed the connection. */
  closed: Promise<void>
}

/** Opens a connection and writes `POST path` with `Content-Length: declared` and `sent` bytes of the body. */
export async function partialPost (port: number, options: { path?: string, declared: number, sent: number }): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1')
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let received = ''
  socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
  // A reset by the server after its answer is a close too.
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.write(`POST ${options.path ?? '/webhooks'} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `X-Signature: sha256=${'0'.repeat(64)}\r\nContent-Length: ${options.declared}\r\n\r\n`)
  if (options.sent > 0) socket.write(Buffer.alloc(options.sent, 0x20))
  return { socket, received: () => received, closed }
}

/** The status code of the first response on a raw connection, or undefined when none came. */
export function statusOf (received: string): number | undefined {
  const match = /^HTTP\/1\.1 (\d{3})/.exec(received)
  return match === null ? undefined : Number(match[1])
}

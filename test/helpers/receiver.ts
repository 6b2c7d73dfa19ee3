import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received { method: string, url: string, headers: IncomingMessage['headers'], body: string, at: number }

/** A real HTTP receiver on loopback that records every request and answers with `answer`. */
export interface Receiver {
  server: Server
  url: string
  received: Received[]
  /** Resolves once `count` requests have arrived. */
  waitFor (count: number): Promise<void>
  close (): Promise<void>
}

export async function startReceiver (answer: (req: Received, res: ServerResponse) => void = (_req, res) => { res.end('ok') }): Promise<Receiver> {
  const received: Received[] = []
  const waiters: Array<{ count: number, resolve: () => void }> = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const one = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      received.push(one)
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve()
      answer(one, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    server,
    url,
    received,
    async waitFor (count) {
      if (received.length >= count) return
      await new Promise<void>((resolve) => waiters.push({ count, resolve }))
    },
    async close () {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** What the CLI prints: the quickstart commands and redacted log lines. Helpers: test/helpers/cli.ts. */
import t from 'tap'
import { createLogger } from '../cli/logging.js'
import { localUrl, opensslCurl, signedCurl } from '../cli/quickstart.js'
import { NEVER_PRINTED, QUICKSTART } from './helpers/cli.js'

t.test('the printed commands: the openssl one is the quickstart, verbatim; the signed one holds the HMAC only', async (t) => {
  t.equal(opensslCurl('http://127.0.0.1:3000/webhooks'), QUICKSTART)
  const signed = signedCurl('http://127.0.0.1:3000/webhooks', NEVER_PRINTED)
  t.match(signed, /-H 'x-signature: sha256=[0-9a-f]{64}'/)
  t.notMatch(signed, NEVER_PRINTED)
  t.equal(localUrl('0.0.0.0', 3000, '/webhooks'), 'http://127.0.0.1:3000/webhooks', 'a wildcard address becomes loopback')
  t.equal(localUrl('::', 8080, '/h'), 'http://[::1]:8080/h')
  t.equal(localUrl('10.0.0.5', 80, '/h'), 'http://10.0.0.5:80/h')
})

t.test('the logger redacts secrets and signature headers', async (t) => {
  const written: string[] = []
  const log = createLogger('info', { write: (line: string) => { written.push(line) } })
  log.info({ secret: NEVER_PRINTED, options: { secrets: [NEVER_PRINTED] }, req: { headers: { 'x-signature': 'sha256=abc', authorization: 'Bearer t' } } }, 'x')
  const entry = JSON.parse(written.join('')) as { req: { headers: Record<string, string> } }
  t.notMatch(written.join(''), NEVER_PRINTED)
  t.same(entry.req.headers, { 'x-signature': '[redacted]', authorization: '[redacted]' })
})
t.test('payloads are redacted from log lines unless ANVIL_LOG_PAYLOADS=true; repeated warnings are throttled', async (t) => {
  const { throttleRepeats } = await import('../cli/logging.js')
  const lines = (logPayloads: boolean): Array<Record<string, unknown>> => {
    const written: string[] = []
    createLogger('info', { destination: { write: (line: string) => { written.push(line) } }, logPayloads })
      .info({ event: { payload: 'card 4242', id: 'e1' }, body: 'raw' }, 'x')
    return written.map((line) => JSON.parse(line) as Record<string, unknown>)
  }
  t.match(lines(false)[0], { event: { payload: '[redacted]', id: 'e1' }, body: '[redacted]' })
  t.match(lines(true)[0], { event: { payload: 'card 4242' }, body: 'raw' })

  const seen: Array<[object, string | undefined]> = []
  const sink = { info: () => {}, warn: (obj: object, msg?: string) => { seen.push([obj, msg]) }, error: () => {} }
  const throttled = throttleRepeats(sink, 60_000)
  for (let i = 0; i < 5; i++) throttled.warn({ err: 'ECONNREFUSED' }, 'anvil worker: Redis error')
  throttled.warn({ err: 'other' }, 'anvil worker: Redis error')
  t.same(seen, [[{ err: 'ECONNREFUSED' }, 'anvil worker: Redis error'], [{ err: 'other' }, 'anvil worker: Redis error']])
})

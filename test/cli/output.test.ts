/** What the CLI prints: the quickstart commands and redacted log lines. Helpers: test/helpers/cli.ts. */
import t from 'tap'
import { createLogger } from '../../cli/logging.js'
import { localUrl, opensslCurl, signedCurl } from '../../cli/quickstart.js'
import { NEVER_PRINTED, QUICKSTART } from '../helpers/cli.js'

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
  const { throttleRepeats } = await import('../../cli/logging.js')
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

  // Per-job lines are never dropped: many jobs failing with one error each leave their line, repeats included.
  seen.length = 0
  for (const jobId of ['e_1', 'e_2', 'e_3', 'e_3']) throttled.warn({ jobId, err: 'boom' }, 'anvil worker: attempt failed')
  t.same(seen.map(([obj]) => (obj as { jobId: string }).jobId), ['e_1', 'e_2', 'e_3', 'e_3'])

  // Thousands of different errors within one window: memory stays bounded by forgetting the oldest, so the
  // very first one, forgotten, is written again; the latest, remembered, is not.
  seen.length = 0
  for (let i = 0; i < 5000; i++) throttled.warn({ err: `error ${i}` }, 'anvil worker: Redis error')
  t.equal(seen.length, 5000, 'each distinct error once')
  throttled.warn({ err: 'error 0' }, 'anvil worker: Redis error')
  throttled.warn({ err: 'error 4999' }, 'anvil worker: Redis error')
  t.same(seen.slice(5000).map(([obj]) => (obj as { err: string }).err), ['error 0'])
})

t.test('request loggers: every line a request writes carries its id, and the level (also per route) holds', async (t) => {
  const { createApp } = await import('../../cli/server.js')
  const linesAt = async (level: 'info' | 'warn'): Promise<Array<Record<string, unknown>>> => {
    const written: string[] = []
    const app = createApp(createLogger(level, { write: (line: string) => { written.push(line) } }))
    app.get('/a', async (request) => {
      request.log.info('info line')
      request.log.warn({ n: 1 }, 'warn line')
      request.log.child({ part: 'inner' }).error('child line')
      const log = request.log as unknown as { isLevelEnabled: (level: string) => boolean }
      return { debug: log.isLevelEnabled('debug'), warn: log.isLevelEnabled('warn') }
    })
    app.get('/quiet', { logLevel: 'error' }, async (request) => {
      request.log.warn('route says error only')
      return {}
    })
    const answer = await app.inject({ url: '/a', headers: { 'x-request-id': 'req-1' } })
    t.same(answer.json(), { debug: false, warn: true })
    await app.inject({ url: '/quiet', headers: { 'x-request-id': 'req-2' } })
    await app.close()
    return written.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.requestId !== undefined)
  }
  const atWarn = await linesAt('warn')
  t.same(atWarn.map((line) => [line.msg, line.requestId]), [['warn line', 'req-1'], ['child line', 'req-1']])
  t.match(atWarn[0], { n: 1, level: 40 })
  t.match(atWarn[1], { part: 'inner', level: 50 })
  const atInfo = await linesAt('info')
  t.same(atInfo.filter((line) => line.requestId === 'req-1').map((line) => line.msg),
    ['incoming request', 'info line', 'warn line', 'child line', 'request completed'])
  t.notOk(atInfo.some((line) => line.requestId === 'req-2'), 'the quiet route writes nothing below error')
})

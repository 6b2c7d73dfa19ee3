// What a signature check costs, per preset, next to raw crypto HMAC-SHA256, and whether a forgery's cost
// depends on how much of it is right. Pure CPU, no Redis, no HTTP. Needs `npm run build` first.
//
//   node bench/verify.mjs [--iterations 20000] [--runs 5] [--bytes 1024] [--quick]
//
// Columns (ns per call; median over runs, then min–max):
//   valid            a correctly signed request
//   forged early     same length, first signature byte wrong
//   forged late      same length, last signature byte wrong
//   late − early     the constant-time check: this should be noise around 0
//   forged − valid   includes building and throwing the 401 error, which every rejection pays the same
import { createHash, createHmac, generateKeyPairSync, sign, timingSafeEqual } from 'node:crypto'
import { createPresetScheme, PROVIDER_NAMES } from '../dist/src/providers/presets.js'
import { benchArgs, emitSection, showSpread, spread } from './lib.mjs'

const values = benchArgs({ iterations: { type: 'string', default: '20000' }, runs: { type: 'string', default: '5' }, bytes: { type: 'string', default: '1024' } })
const ITERATIONS = values.quick ? 20 : Number(values.iterations)
const RUNS = values.quick ? 2 : Number(values.runs)
const SECRET = 'whsec_bench_secret'
const STANDARD_SECRET = 'whsec_' + Buffer.alloc(24, 7).toString('base64')
const URL = 'https://hooks.example/bench'
const ed = generateKeyPairSync('ed25519')
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const body = Buffer.from(JSON.stringify({ id: 'evt_bench', type: 'bench.event', event_id: 'evt_bench', pad: 'x'.repeat(Math.max(0, Number(values.bytes) - 80)) }))
const batchBody = Buffer.concat([Buffer.from('['), body, Buffer.from(']')])
const hex = (...parts) => { const mac = createHmac('sha256', SECRET); for (const p of parts) mac.update(p); return mac.digest('hex') }
const b64 = (...parts) => Buffer.from(hex(...parts), 'hex').toString('base64')

/** Per preset: the secrets it is built with, and a valid request (headers and signed URL) at time ts. */
const FIXTURES = {
  anvil: (ts) => ({ headers: { 'x-signature': 'sha256=' + hex(body) } }),
  stripe: (ts) => ({ headers: { 'stripe-signature': `t=${ts},v1=${hex(`${ts}.`, body)}` } }),
  github: () => ({ headers: { 'x-hub-signature-256': 'sha256=' + hex(body), 'x-github-delivery': 'd1', 'x-github-event': 'push' } }),
  shopify: () => ({ headers: { 'x-shopify-hmac-sha256': b64(body), 'x-shopify-event-id': 'e1' } }),
  slack: (ts) => ({ headers: { 'x-slack-request-timestamp': String(ts), 'x-slack-signature': 'v0=' + hex(`v0:${ts}:`, body) } }),
  twilio: () => {
    const url = `${URL}?bodySHA256=${createHash('sha256').update(body).digest('hex')}`
    return { url, headers: { 'x-twilio-signature': createHmac('sha1', SECRET).update(url).digest('base64') } }
  },
  'standard-webhooks': (ts) => ({
    secrets: [STANDARD_SECRET],
    headers: {
      'webhook-id': 'msg_1', 'webhook-timestamp': String(ts),
      'webhook-signature': 'v1,' + createHmac('sha256', Buffer.from(STANDARD_SECRET.slice(6), 'base64')).update(`msg_1.${ts}.`).update(body).digest('base64')
    }
  }),
  paddle: (ts) => ({ headers: { 'paddle-signature': `ts=${ts};h1=${hex(`${ts}:`, body)}` } }),
  linear: () => ({ headers: { 'linear-signature': hex(body) }, tolerance: 0 }),
  square: () => ({ url: URL, headers: { 'x-square-hmacsha256-signature': b64(URL, body) } }),
  zoom: (ts) => ({ headers: { 'x-zm-request-timestamp': String(ts), 'x-zm-signature': 'v0=' + hex(`v0:${ts}:`, body) } }),
  gitlab: () => ({ headers: { 'x-gitlab-token': SECRET } }),
  discord: (ts) => ({
    secrets: [ed.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex')],
    headers: { 'x-signature-timestamp': String(ts), 'x-signature-ed25519': sign(null, Buffer.concat([Buffer.from(String(ts)), body]), ed.privateKey).toString('hex') }
  }),
  // SendGrid's body is an array of events (its row includes splitting it): the same event, in brackets.
  sendgrid: (ts) => ({
    body: batchBody,
    secrets: [ec.publicKey.export({ format: 'der', type: 'spki' }).toString('base64')],
    headers: { 'x-twilio-email-event-webhook-timestamp': String(ts), 'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.concat([Buffer.from(String(ts)), batchBody]), ec.privateKey).toString('base64') }
  })
}

/** Flips one character of the signature value, keeping its length and alphabet. */
function forge (value, at) {
  const index = at === 'early' ? value.search(/[0-9a-f]{8}|[A-Za-z0-9+/]{8}/) + 2 : value.length - 3
  const c = value[index]
  return value.slice(0, index) + (c === 'a' ? 'b' : 'a') + value.slice(index + 1)
}

function timePerCall (fn) {
  const start = process.hrtime.bigint()
  for (let i = 0; i < ITERATIONS; i++) fn()
  return Number(process.hrtime.bigint() - start) / ITERATIONS
}

const cell = (xs) => showSpread(spread(xs))

const ts = Math.floor(Date.now() / 1000)
const rows = []
// Baseline: what one HMAC-SHA256 over the body plus a constant-time compare costs, with nothing else.
const expected = createHmac('sha256', SECRET).update(body).digest()
const raw = Array.from({ length: RUNS }, () => timePerCall(() => timingSafeEqual(createHmac('sha256', SECRET).update(body).digest(), expected)))
rows.push(['raw crypto HMAC', raw])

for (const name of PROVIDER_NAMES) {
  const fixture = FIXTURES[name](ts)
  const scheme = createPresetScheme(name, { secrets: fixture.secrets ?? [SECRET], toleranceSeconds: fixture.tolerance ?? 300 })
  const signatureHeader = scheme.headers.find((h) => fixture.headers[h] !== undefined) ?? Object.keys(fixture.headers).find((h) => /signature|token|hmac/.test(h))
  const request = { url: fixture.url }
  const payload = fixture.body ?? body
  const run = (headers) => () => { try { scheme.verify(payload, headers, request) } catch {} }
  scheme.verify(payload, fixture.headers, request) // throws if the fixture is wrong: a bench of 401s would be meaningless
  const early = { ...fixture.headers, [signatureHeader]: forge(fixture.headers[signatureHeader], 'early') }
  const late = { ...fixture.headers, [signatureHeader]: forge(fixture.headers[signatureHeader], 'late') }
  const valid = []; const forgedEarly = []; const forgedLate = []
  for (let r = 0; r < RUNS; r++) {
    // Interleaved, so drift (thermal, other processes) lands on all three alike.
    valid.push(timePerCall(run(fixture.headers)))
    forgedEarly.push(timePerCall(run(early)))
    forgedLate.push(timePerCall(run(late)))
  }
  rows.push([name, valid, forgedEarly, forgedLate])
}

const markdown = [
  `ns per call: ${ITERATIONS} iterations × ${RUNS} runs, ${body.length}-byte body; median [min–max]. Pure CPU, no Redis, no HTTP.`,
  '*forged early / late*: same length, first / last signature byte wrong; *late − early* is the constant-time check (noise around 0);',
  '*forged − valid* includes building and throwing the 401 error, which every rejection pays alike.', '',
  '| preset | valid | forged early | forged late | late − early | forged − valid |',
  '|---|---|---|---|---|---|'
]
const data = []
for (const [name, valid, early, late] of rows) {
  if (early === undefined) {
    markdown.push(`| ${name} | ${cell(valid)} | | | | |`)
    data.push({ preset: name, valid: spread(valid) })
    continue
  }
  const lateMinusEarly = late.map((x, i) => x - early[i])
  const forgedMinusValid = early.map((x, i) => x - valid[i])
  markdown.push(`| ${name} | ${cell(valid)} | ${cell(early)} | ${cell(late)} | ${cell(lateMinusEarly)} | ${cell(forgedMinusValid)} |`)
  data.push({ preset: name, valid: spread(valid), forgedEarly: spread(early), forgedLate: spread(late), lateMinusEarly: spread(lateMinusEarly), forgedMinusValid: spread(forgedMinusValid) })
}
emitSection({ id: 'verify', title: 'Signature verification', markdown, data: { iterations: ITERATIONS, runs: RUNS, bytes: body.length, rows: data } }, values)

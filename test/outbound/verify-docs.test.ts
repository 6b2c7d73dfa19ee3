/**
 * The receiver's verification recipes of docs/outgoing-webhooks.md ("Verifying deliveries"), taken from the page
 * as written, against real deliveries: a delivery worker signs and POSTs to a receiver on loopback, and each Node
 * and Python snippet accepts what arrived (with the new and the rotated-out secret), and refuses a changed body,
 * another secret and a timestamp 10 minutes old; so does the Go block, built with Debian's golang-go. Neither
 * is skipped: without python3 or go on PATH (.ci/run installs both) their tests fail.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import Stripe from 'stripe'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { signatureHeaders, type OutboundScheme } from '../../src/send/sign-outbound.js'
import { findExecutable } from '../../cli/dev-redis.js'
import { ROOT } from '../helpers/cli.js'
import { outboundFixture } from '../helpers/outbound.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { startReceiver, type Received } from '../helpers/receiver.js'

type Verify = (secret: string, headers: Record<string, string>, body: string) => unknown

const page = readFileSync(join(ROOT, 'docs/outgoing-webhooks.md'), 'utf8')
const section = page.slice(page.indexOf('## Verifying deliveries'), page.indexOf('## The admin API of outgoing webhooks'))
const blocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1] as string, code: m[2] as string }))
/** The block whose first line is `// <file>: <what>` (or `# …` in Python). */
const block = (file: string): string => {
  const found = blocks.find((b) => b.code.split('\n')[0]?.includes(`${file}: `))
  if (found === undefined) throw new Error(`docs/outgoing-webhooks.md has no block starting with ${file}`)
  return found.code
}
const nodeBlocks = blocks.filter((b) => b.lang === 'js')

// Node snippets are written beside the repository's node_modules, so `import 'standardwebhooks'` resolves as in a project.
const dir = mkdtempSync(join(ROOT, '.verify-snippets-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
async function loadNode (index: number): Promise<Verify> {
  const file = join(dir, `snippet-${index}.mjs`)
  writeFileSync(file, nodeBlocks[index]?.code ?? '')
  return ((await import(pathToFileURL(file).href)) as { verifyWebhook: Verify }).verifyWebhook
}

const PYTHON = findExecutable('python3')
/** The Python block as written, then a harness that calls it on one case from stdin. */
async function python (secret: string, headers: Record<string, string>, body: string): Promise<{ ok?: unknown, error?: string }> {
  const file = join(dir, 'verify_webhook.py')
  writeFileSync(file, block('verify_webhook.py') + `
import sys
case = json.load(sys.stdin)
try:
    print(json.dumps({"ok": verify_webhook(case["secret"], case["headers"], base64.b64decode(case["body"]))}))
except Exception as error:
    print(json.dumps({"error": str(error)}))
`)
  return await new Promise((resolve, reject) => {
    const child = execFile(PYTHON as string, [file], (err, stdout) => err === null ? resolve(JSON.parse(stdout)) : reject(err))
    child.stdin?.end(JSON.stringify({ secret, headers, body: Buffer.from(body).toString('base64') }))
  })
}

const GO = findExecutable('go')
let goBinary: string | undefined
/** The Go block as written, as package `webhooks`, behind a main that calls it on one case from stdin. */
async function go (secret: string, headers: Record<string, string>, body: string): Promise<{ ok?: boolean, error?: string }> {
  if (goBinary === undefined) {
    const module = join(dir, 'go')
    mkdirSync(join(module, 'webhooks'), { recursive: true })
    writeFileSync(join(module, 'go.mod'), 'module verifydocs\n\ngo 1.18\n')
    writeFileSync(join(module, 'webhooks', 'verify.go'), block('verify.go'))
    writeFileSync(join(module, 'main.go'), `package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"verifydocs/webhooks"
)

func main() {
	var c struct {
		Secret  string            \`json:"secret"\`
		Headers map[string]string \`json:"headers"\`
		Body    []byte            \`json:"body"\`
	}
	json.NewDecoder(os.Stdin).Decode(&c)
	header := http.Header{}
	for name, value := range c.Headers {
		header.Set(name, value)
	}
	if err := webhooks.Verify(c.Secret, header, c.Body); err != nil {
		out, _ := json.Marshal(map[string]string{"error": err.Error()})
		fmt.Println(string(out))
		return
	}
	fmt.Println(\`{"ok":true}\`)
}
`)
    await new Promise<void>((resolve, reject) => execFile(GO as string, ['build', '-o', 'verify'], { cwd: module, env: { ...process.env, GOCACHE: join(module, '.cache'), GOPATH: join(module, '.gopath'), GOFLAGS: '-mod=mod' } }, (err, _out, stderr) => err === null ? resolve() : reject(new Error(stderr))))
    goBinary = join(module, 'verify')
  }
  return await new Promise((resolve, reject) => {
    const child = execFile(goBinary as string, (err, stdout) => err === null ? resolve(JSON.parse(stdout)) : reject(err))
    child.stdin?.end(JSON.stringify({ secret, headers, body: Buffer.from(body).toString('base64') }))
  })
}

const fixture = outboundFixture()
const receiver = beforeAll(t, async () => await startReceiver((_req, res) => { res.statusCode = 204; res.end() }), async (receiver) => await receiver.close())
const outbound = beforeAll(t, async () => fixture.open({ queueName: 'verify-docs', dispatch: { pollIntervalMs: 100 } }))
const worker = beforeAll(t, async () => createDeliveryWorker({ redis: fixture.redis.url, store: outboundInternals(outbound).store, queueName: 'verify-docs', allowNets: '127.0.0.0/8' }),
  async (worker) => await worker.close())
beforeStep(t, async () => await Promise.all([worker.start(), outbound.dispatcher.start()]))

/** One real delivery to a new endpoint of `scheme` whose secret was rotated: the secrets, newest first, and the request. */
async function delivery (scheme: OutboundScheme): Promise<{ secrets: string[], request: Received }> {
  const path = `/${scheme}`
  const created = await outbound.endpoints.create({ url: receiver.url + path, tenant: scheme, scheme })
  const rotated = await outbound.endpoints.rotateSecret(created.id)
  await outbound.publish({ type: 'order.paid', data: { order: 'ord_1', total: 4200, note: 'café ☕' }, tenant: scheme })
  await receiver.waitFor(receiver.received.length + 1)
  const request = receiver.received.find((r) => r.url === path) as Received
  return { secrets: [rotated.secret, created.secret], request }
}

const standard = beforeAll(t, async () => await delivery('standard-webhooks'))
const stripe = beforeAll(t, async () => await delivery('stripe'))
const headersOf = (request: Received): Record<string, string> => request.headers as Record<string, string>
/** The same message signed 10 minutes ago, with a valid signature: only the tolerance refuses it. */
function stale (scheme: OutboundScheme, request: Received, secret: string): Record<string, string> {
  const id = request.headers[scheme === 'stripe' ? 'x-webhook-id' : 'webhook-id'] as string
  return signatureHeaders({ scheme, id, type: 'order.paid', timestamp: Math.floor(Date.now() / 1000) - 600, body: request.body, secrets: [secret] })
}

t.test('the page holds the five recipes: Node with and without standardwebhooks, Python, Go, the Stripe-shaped scheme', async (t) => {
  t.same(blocks.map((b) => b.lang), ['js', 'js', 'python', 'go', 'js'])
  t.match(block('verify.go'), /func Verify\(secret string, header http.Header, body \[\]byte\) error/)
  t.match(section, /base64-decoded/)
  t.match(section, /<webhook-id>\.<webhook-timestamp>\.<body>/)
  t.match(section, /5 minutes \(300 s\)/)
  t.match(section, /https:\/\/github\.com\/standard-webhooks\/standard-webhooks\/blob\/main\/spec\/standard-webhooks\.md/)
  t.match(section, /X-Webhook-Signature: t=<unix seconds>,v1=<hex>/)
})

const cases = [
  { name: 'Node with the standardwebhooks package', index: 0, scheme: 'standard-webhooks' as const },
  { name: 'Node with node:crypto only', index: 1, scheme: 'standard-webhooks' as const },
  { name: 'Node, the Stripe-shaped scheme', index: 2, scheme: 'stripe' as const }
]
for (const { name, index, scheme } of cases) {
  t.test(`${name}: accepts the delivery with either secret, refuses a changed body, another secret and a stale timestamp`, async (t) => {
    const verify = await loadNode(index)
    const { secrets, request } = scheme === 'stripe' ? stripe : standard
    const headers = headersOf(request)
    for (const secret of secrets) t.match(verify(secret, headers, request.body), { type: 'order.paid', data: { order: 'ord_1', note: 'café ☕' } })
    t.throws(() => verify(secrets[0] as string, headers, request.body.replace('4200', '4201')), 'a changed body')
    t.throws(() => verify('whsec_' + Buffer.alloc(32, 7).toString('base64'), headers, request.body), 'another secret')
    t.throws(() => verify(secrets[0] as string, stale(scheme, request, secrets[0] as string), request.body), /too old/, 'a timestamp 10 minutes old')
  })
}

t.test('Stripe\'s own SDK verifies the Stripe-shaped scheme, as the page says', async (t) => {
  const event = new Stripe('sk_test_unused').webhooks.constructEvent(stripe.request.body, headersOf(stripe.request)['x-webhook-signature'] as string, stripe.secrets[0] as string)
  t.match(event, { type: 'order.paid' })
})

t.test('Python, standard library only: accepts the delivery with either secret, refuses a changed body, another secret and a stale timestamp', async (t) => {
  // Never skipped: .ci/run installs python3, and a recipe that is not run is not tested.
  if (PYTHON === undefined) return t.fail('python3 is not on PATH (.ci/run installs it): the Python block was not run')
  const { secrets, request } = standard
  for (const secret of secrets) t.match(await python(secret, headersOf(request), request.body), { ok: { type: 'order.paid', data: { note: 'café ☕' } } })
  t.match(await python(secrets[0] as string, headersOf(request), request.body.replace('4200', '4201')), { error: 'no matching signature' })
  t.match(await python('whsec_' + Buffer.alloc(32, 7).toString('base64'), headersOf(request), request.body), { error: 'no matching signature' })
  t.match(await python(secrets[0] as string, stale('standard-webhooks', request, secrets[0] as string), request.body), { error: 'timestamp too old or too new' })
})

t.test('Go, standard library only: accepts the delivery with either secret, refuses a changed body, another secret and a stale timestamp', async (t) => {
  if (GO === undefined) return t.fail('go is not on PATH (.ci/run installs golang-go): the Go block was not run')
  const { secrets, request } = standard
  for (const secret of secrets) t.same(await go(secret, headersOf(request), request.body), { ok: true })
  t.same(await go(secrets[0] as string, headersOf(request), request.body.replace('4200', '4201')), { error: 'no matching signature' })
  t.same(await go('whsec_' + Buffer.alloc(32, 7).toString('base64'), headersOf(request), request.body), { error: 'no matching signature' })
  t.same(await go(secrets[0] as string, stale('standard-webhooks', request, secrets[0] as string), request.body), { error: 'timestamp too old or too new' })
})

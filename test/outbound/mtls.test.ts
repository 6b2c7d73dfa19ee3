/**
 * Mutual TLS to receivers (issue 37, contract 5), against real HTTPS receivers on 127.0.0.1 whose CA and
 * certificates openssl makes at test time: an endpoint with `tls` presents its client certificate and trusts its
 * CA; one without the certificate is refused by a receiver that requires it; another endpoint of the same origin
 * is never given the first one's certificate (nor its connections). The key is stored encrypted, never answered,
 * never logged and never in job data; bad PEM, a key that is not the certificate's, and no encryption key are 400s.
 */
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { TLSSocket } from 'node:tls'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { adminDelivery, outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const ENCRYPTION_KEY = randomBytes(32).toString('base64')
const logged: string[] = []
const logger = Object.fromEntries(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map((level) => [level, (...args: unknown[]) => { logged.push(JSON.stringify(args)) }]))
logger.child = () => logger

/** A CA, a server certificate for 127.0.0.1, and two client certificates: one of the CA, one of a stranger CA. */
function makePki (): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey' | 'otherCert' | 'otherKey', string> {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-mtls-'))
  const ssl = (...args: string[]): void => { execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' }) }
  const caOf = (name: string): void => ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`)
  const signed = (name: string, ca: string, ext: string): void => {
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`)
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', 'ext.cnf', '-extensions', ext)
  }
  execFileSync('sh', ['-c', 'printf "[server]\\nsubjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n[client]\\nextendedKeyUsage=clientAuth\\n" > ext.cnf'], { cwd: dir })
  caOf('ca')
  caOf('stranger')
  signed('server', 'ca', 'server')
  signed('client', 'ca', 'client')
  signed('other', 'stranger', 'client')
  const read = (file: string): string => readFileSync(join(dir, file), 'utf8')
  const pki = { ca: read('ca.pem'), serverCert: read('server.pem'), serverKey: read('server.key'), clientCert: read('client.pem'), clientKey: read('client.key'), otherCert: read('other.pem'), otherKey: read('other.key') }
  rmSync(dir, { recursive: true, force: true })
  return pki
}
const pki = makePki()

interface Seen { path: string, peer: string | undefined, authorized: boolean }
/** An HTTPS receiver; `require`: the handshake fails without a certificate of the CA. Records each request's client certificate. */
async function httpsReceiver (require: boolean): Promise<{ url: string, seen: Seen[], server: Server }> {
  const seen: Seen[] = []
  const server = createServer({ key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: require }, (req, res) => {
    const socket = req.socket as TLSSocket
    const peer = socket.getPeerCertificate()
    seen.push({ path: req.url ?? '', peer: peer?.subject?.CN as string | undefined, authorized: socket.authorized })
    req.resume()
    req.on('end', () => res.writeHead(200).end('ok'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { url: `https://127.0.0.1:${port}`, seen, server }
}
const closeServer = async (r: { server: Server }): Promise<void> => { r.server.closeAllConnections(); await new Promise((resolve) => r.server.close(resolve)) }

const strict = beforeAll(t, async () => await httpsReceiver(true), closeServer)
const open = beforeAll(t, async () => await httpsReceiver(false), closeServer)
const { outbound, app } = adminDelivery(fixture, { queueName: 'mtls', token: TOKEN, logger: logger as never, encryptionKey: ENCRYPTION_KEY })
const keyless = beforeAll(t, async () => fixture.open({ queueName: 'mtls-keyless' }))

const KEY_LINE = (pki.clientKey.split('\n')[1] ?? '').slice(0, 40)
const noKeyIn = (t: Test, text: string, what: string): void => { t.notOk(text.includes(KEY_LINE), `${what} holds no part of the private key`) }
const post = async (payload: object) => await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload })

t.test('an endpoint with tls answers its certificate\'s fingerprint and expiry, never the key; the key is stored encrypted', async (t) => {
  const created = await post({ url: strict.url + '/a', tenant: 'mtls', tls: { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey } })
  t.equal(created.statusCode, 201, created.body)
  const body = created.json()
  t.match(body.tls, { ca: true, certificate: { fingerprint: /^[0-9A-F:]{95}$/, subject: 'CN=client', expiresAt: String } })
  t.ok(Date.parse(body.tls.certificate.expiresAt) > Date.now(), 'the expiry is in the future')
  noKeyIn(t, created.body, 'the create answer')
  for (const url of [`/admin/endpoints/${body.id as string}`, '/admin/endpoints?tenant=mtls', `/admin/endpoints/${body.id as string}/secret`]) {
    const answer = await app.inject({ url, headers: auth })
    t.equal(answer.statusCode, 200)
    noKeyIn(t, answer.body, url)
  }
  const [row] = await db.query<{ tls: string }>('SELECT tls::text AS tls FROM anvil.endpoints WHERE id = $1', [body.id])
  noKeyIn(t, row?.tls ?? '', 'the stored row')
  t.match(JSON.parse(row?.tls ?? '{}').key, /^anvil:enc:v1:[0-9a-f]{8}:/, 'the stored key is sealed')
  const spec = (await app.inject({ url: '/admin/openapi.json', headers: auth })).json()
  const input = JSON.stringify(spec.paths['/admin/endpoints'].post.requestBody.content['application/json'].schema)
  t.ok(input.includes('"tls"') && input.includes('"cert"'), 'the OpenAPI document shows the tls field')
})

t.test('bad PEM, a key that is not the certificate\'s, a cert without its key, tls on http, and no encryption key are 400s', async (t) => {
  const refused = async (payload: object, match: RegExp, code = 'ANVIL_ERR_INVALID_ENDPOINT'): Promise<void> => {
    const answer = await post({ url: strict.url + '/r', ...payload })
    t.equal(answer.statusCode, 400, answer.body)
    t.equal(answer.json().code, code)
    t.match(answer.json().error, match)
    noKeyIn(t, answer.body, 'the refusal')
  }
  await refused({ tls: { ca: 'not a pem' } }, /tls\.ca: no PEM certificate/)
  await refused({ tls: { ca: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' } }, /tls\.ca: certificate 1 does not parse/)
  await refused({ tls: { cert: pki.clientCert, key: 'garbage' } }, /tls\.key: not a PEM private key/)
  await refused({ tls: { cert: pki.clientCert, key: pki.otherKey } }, /the key is not the certificate's/)
  await refused({ tls: { cert: pki.clientCert } }, /cert and key go together/)
  await refused({ url: 'http://127.0.0.1:1/x', tls: { ca: pki.ca } }, /must be https/)
  await t.rejects(keyless.endpoints.create({ url: strict.url + '/k', tls: { cert: pki.clientCert, key: pki.clientKey } }),
    { code: 'ANVIL_ERR_ENCRYPTION_KEY_REQUIRED', statusCode: 400, message: /tls\.key is stored encrypted.*ANVIL_ENCRYPTION_KEY/ })
  const plain = await outbound.endpoints.create({ url: 'http://127.0.0.1:1/p' })
  const patched = await app.inject({ method: 'PATCH', url: `/admin/endpoints/${plain.id}`, headers: auth, payload: { tls: { ca: pki.ca } } })
  t.equal(patched.statusCode, 400, 'a patch may not set tls on an http endpoint')
  await outbound.endpoints.remove(plain.id)
})

t.test('deliveries: with tls they reach the receiver that requires it; without the certificate they fail; another endpoint of the same origin never gets it', async (t) => {
  // On the strict receiver: with the client certificate (created above), with its CA only (no certificate), with a stranger's certificate.
  const without = await outbound.endpoints.create({ url: strict.url + '/b', tenant: 'mtls', tls: { ca: pki.ca } })
  const stranger = await outbound.endpoints.create({ url: strict.url + '/c', tenant: 'mtls', tls: { ca: pki.ca, cert: pki.otherCert, key: pki.otherKey } })
  // On the receiver that asks for a certificate but takes requests without: one endpoint presents, one of the same origin does not.
  const presents = await outbound.endpoints.create({ url: open.url + '/d', tenant: 'mtls-open', tls: { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey } })
  const bare = await outbound.endpoints.create({ url: open.url + '/e', tenant: 'mtls-open', tls: { ca: pki.ca } })

  const first = await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'mtls' })
  await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'mtls-open' })
  await eventually('each endpoint has a logged outcome', async () => {
    const rows = await db.query<{ n: number }>("SELECT count(DISTINCT endpoint_id)::int AS n FROM anvil.deliveries WHERE status <> 'started'")
    return (rows[0]?.n ?? 0) >= 5
  }, 20_000)
  const outcome = async (endpointId: string): Promise<{ status: string, error_class: string | null }> =>
    (await db.query<{ status: string, error_class: string | null }>('SELECT status, error_class FROM anvil.deliveries WHERE endpoint_id = $1 ORDER BY id LIMIT 1', [endpointId]))[0] ?? { status: 'none', error_class: null }
  const [withTls] = (await outbound.endpoints.list({ tenant: 'mtls' })).items.filter((e) => e.url === strict.url + '/a')
  t.equal((await outcome(withTls?.id ?? '')).status, 'success', 'the endpoint with its client certificate is delivered')
  t.same(strict.seen.filter((s) => s.path === '/a').map((s) => [s.peer, s.authorized]), [['client', true]], 'the strict receiver saw the client certificate')
  t.equal((await outcome(without.id)).status, 'failed', 'without a client certificate the strict receiver refuses the handshake')
  t.equal((await outcome(stranger.id)).status, 'failed', 'a certificate of another CA is refused too')
  t.notOk(strict.seen.some((s) => s.path === '/b' || s.path === '/c'), 'neither reached the handler')
  t.equal((await outcome(presents.id)).status, 'success')
  t.equal((await outcome(bare.id)).status, 'success')
  t.same(open.seen.filter((s) => s.path === '/d').map((s) => s.peer), ['client'], 'the endpoint with tls presented its certificate')
  t.same(open.seen.filter((s) => s.path === '/e').map((s) => s.peer), [undefined], 'the endpoint of the same origin without one presented none')

  const client = new Redis(redis.url)
  const job = await client.hgetall(`{anvil}:mtls:${first.messageId}.${withTls?.id ?? ''}`)
  await client.quit()
  t.ok(Object.keys(job).length > 0, 'the job is found')
  noKeyIn(t, JSON.stringify(job), 'the job')
  noKeyIn(t, logged.join('\n'), 'the logs')
})

t.test('a patch replaces tls (a new connection with the new certificate) and null removes it', async (t) => {
  const endpoint = await outbound.endpoints.create({ url: open.url + '/f', tenant: 'mtls-patch', tls: { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey } })
  await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'mtls-patch' })
  await eventually('the first delivery arrives', async () => open.seen.some((s) => s.path === '/f'))
  const patched = await app.inject({ method: 'PATCH', url: `/admin/endpoints/${endpoint.id}`, headers: auth, payload: { tls: { ca: pki.ca } } })
  t.equal(patched.statusCode, 200, patched.body)
  t.same(patched.json().tls, { ca: true, certificate: null })
  await outbound.publish({ type: 'order.paid', data: { n: 2 }, tenant: 'mtls-patch' })
  await eventually('the second delivery arrives', async () => open.seen.filter((s) => s.path === '/f').length === 2)
  t.same(open.seen.filter((s) => s.path === '/f').map((s) => s.peer), ['client', undefined], 'the certificate went with the first only')
  const removed = await app.inject({ method: 'PATCH', url: `/admin/endpoints/${endpoint.id}`, headers: auth, payload: { tls: null } })
  t.equal(removed.json().tls, null)
})

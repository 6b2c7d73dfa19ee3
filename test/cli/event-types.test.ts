/**
 * `anvil event-types export --format openapi|asyncapi|jsonschema`, straight from PostgreSQL and through a real
 * `anvil serve`'s admin API (--url). No OpenAPI or AsyncAPI meta-schema is installed, so each document is parsed
 * and its structure asserted: the spec's version, a webhook (or message and operation) per type, every local
 * `$ref` resolving. Its schemas are compiled as a consumer's validator would (ajv, JSON Schema 2020-12 for OpenAPI
 * and the JSON Schema document, draft-07 for AsyncAPI), and the bodies and headers a real `anvil worker`
 * delivered fit them, while a body whose data breaks its type does not.
 */
import t from 'tap'
import AjvModule from 'ajv'
import Ajv2020Module from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { createOutbound } from '../../src/outbox/outbound.js'
import { migrate } from '../../src/db/migrate.js'
import { runCli, startCli } from '../helpers/cli.js'
import { refusal } from '../helpers/program.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { startReceiver, type Received } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'

const Ajv = AjvModule.default
const Ajv2020 = Ajv2020Module.default
const addFormats = addFormatsModule.default
type Json = Record<string, any>

const TOKEN = 'admin-token-for-cli-event-types'
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const receiver = beforeAll(t, async () => await startReceiver((_req, res) => { res.statusCode = 204; res.end() }), async (receiver) => await receiver.close())
const outbound = beforeAll(t, async () => createOutbound({ database: db.url, redis: redis.url }), async (outbound) => await outbound.close())

// `invoice_paid` meets `invoice.paid`'s component name, InvoicePaid: it gets another.
beforeStep(t, async () => {
  await outbound.eventTypes.put('invoice.paid', {
    description: 'An invoice was paid',
    schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      required: ['amount', 'currency', 'paidAt'],
      properties: { amount: { type: 'integer', minimum: 0 }, currency: { type: 'string', pattern: '^[a-z]{3}$' }, paidAt: { type: 'string', format: 'date-time' } },
      additionalProperties: false
    }
  })
  await outbound.eventTypes.put('invoice_paid', { schema: { type: 'object', required: ['legacy'], properties: { legacy: { type: 'boolean' } } } })
  await outbound.eventTypes.put('user.deleted', { description: 'A user left', schema: { type: 'object', required: ['userId'], properties: { userId: { type: 'string', format: 'uuid' } } }, deprecated: true })
})
const TYPES = ['invoice.paid', 'invoice_paid', 'user.deleted']
const COMPONENTS = { 'invoice.paid': 'InvoicePaid', invoice_paid: 'InvoicePaid2', 'user.deleted': 'UserDeleted' } as Record<string, string>

// Real deliveries, one per type, by a real worker: what a consumer's code gets.
const env = beforeAll(t, async () => ({ REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url }))
const DATA: Record<string, unknown> = {
  'invoice.paid': { amount: 4200, currency: 'eur', paidAt: '2026-12-03T12:00:00Z' },
  invoice_paid: { legacy: true },
  'user.deleted': { userId: '0b4e7a47-5b2c-4a55-9d3a-2f7c1c0f6f3e' }
}
let delivered: Array<{ body: Json, headers: Received['headers'] }>
beforeStep(t, async () => {
  await outbound.endpoints.create({ url: `${receiver.url}/hook` })
  const worker = startCli(t, ['worker'], { env: { ...env, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', HOST: '127.0.0.1', PORT: '0' } })
  await worker.log('anvil worker: dispatching and delivering outgoing webhooks')
  for (const type of TYPES) await outbound.publish({ type, data: DATA[type] })
  await receiver.waitFor(3)
  delivered = receiver.received.map((request) => ({ body: JSON.parse(request.body) as Json, headers: request.headers }))
  t.same(delivered.map((d) => d.body.type).sort(), TYPES)
})

async function exported (format: string, extra: string[] = [], cliEnv: Record<string, string> = env): Promise<Json> {
  const result = await runCli(['event-types', 'export', '--format', format, ...extra], { env: cliEnv })
  if (result.code !== 0) throw new Error(`export --format ${format}: exit ${String(result.code)}: ${result.stderr}`)
  return JSON.parse(result.stdout) as Json
}

/** Every local `$ref` of the document, and whether its JSON pointer finds something. */
function refs (doc: Json): Array<[string, boolean]> {
  const found: Array<[string, boolean]> = []
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk)
    else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string') {
          const target = inner.slice(2).split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
            .reduce<unknown>((at, part) => (at as Json | undefined)?.[part], doc)
          found.push([inner, inner.startsWith('#/') && target !== undefined])
        } else walk(inner)
      }
    }
  }
  walk(doc)
  return found
}

/** A validator of `pointer` within `doc`, as a consumer would compile it. */
interface Validators { getSchema: (id: string) => unknown, addSchema: (schema: object, key: string) => unknown, compile: (schema: object) => (data: unknown) => boolean }
function validator (ajv: Validators, doc: Json, id: string, pointer: string): (data: unknown) => boolean {
  if (ajv.getSchema(id) === undefined) ajv.addSchema(doc, id)
  const validate = ajv.compile({ $ref: `${id}${pointer}` })
  return (data) => validate(data)
}

const broken = (body: Json): Json => ({ ...body, data: { ...body.data, amount: 'a lot', legacy: 'yes', userId: 'not-a-uuid' } })

t.test('--format openapi, from PostgreSQL: OpenAPI 3.1 with a webhook per type; a delivered body fits its webhook\'s schema', async (t) => {
  const doc = await exported('openapi', ['--title', 'Acme webhooks', '--api-version', '2.1.0'])
  t.equal(doc.openapi, '3.1.0')
  t.same(doc.info, { title: 'Acme webhooks', version: '2.1.0', description: 'The webhooks this service sends: one per event type' })
  t.same(Object.keys(doc.webhooks), TYPES, 'a webhook per type, by its name')
  for (const type of TYPES) {
    const post = doc.webhooks[type].post
    t.equal(post.operationId, COMPONENTS[type], `${type}: a distinct operation and component name`)
    t.same(post.requestBody.content['application/json'].schema, { $ref: `#/components/schemas/${COMPONENTS[type]}` })
    t.ok(post.responses['2XX'], 'what the receiver answers')
  }
  t.match(doc.webhooks['invoice.paid'].post, { summary: 'invoice.paid', description: 'An invoice was paid' })
  t.equal(doc.webhooks['user.deleted'].post.deprecated, true, 'deprecated, as OpenAPI says it')
  t.same(doc.webhooks['invoice.paid'].post.parameters.map((p: Json) => doc.components.parameters[p.$ref.split('/').pop()].name), ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
  t.same(refs(doc).filter(([, ok]) => !ok), [], `every $ref resolves (${refs(doc).length})`)
  t.notOk(JSON.stringify(doc).includes('draft-07/schema#'), 'a stored schema\'s $schema is left out: in 2020-12 it belongs to a document\'s root')

  const ajv = new Ajv2020({ strict: false, logger: false })
  addFormats(ajv)
  for (const { body } of delivered) {
    const fits = validator(ajv, doc, 'openapi.json', `#/components/schemas/${COMPONENTS[body.type as string] as string}`)
    t.ok(fits(body), `the delivered ${String(body.type)} fits`)
    t.notOk(fits(broken(body)), `a ${String(body.type)} whose data breaks its type does not`)
  }
})

t.test('--format asyncapi: AsyncAPI 3.0, a message and a send operation per type; delivered bodies and headers fit', async (t) => {
  const doc = await exported('asyncapi')
  t.equal(doc.asyncapi, '3.0.0')
  t.match(doc.info, { title: 'Webhook events', version: '1.0.0' })
  t.same(Object.keys(doc.channels.webhooks.messages), TYPES.map((type) => COMPONENTS[type]))
  t.same(Object.values(doc.operations).map((op: any) => [op.action, op.summary]), TYPES.map((type) => ['send', type]))
  t.same(Object.values(doc.components.messages).map((m: any) => m.name), TYPES, 'each message named by its type')
  t.match(doc.components.messages.UserDeleted, { summary: 'Deprecated. A user left', contentType: 'application/json' })
  t.same(refs(doc).filter(([, ok]) => !ok), [], `every $ref resolves (${refs(doc).length})`)
  for (const key of [...Object.keys(doc.channels), ...Object.keys(doc.operations), ...Object.keys(doc.components.messages), ...Object.keys(doc.components.schemas)]) {
    t.match(key, /^[a-zA-Z0-9.\-_]+$/, `${key}: a key AsyncAPI accepts`)
  }

  const ajv = new Ajv({ strict: false, logger: false })
  addFormats(ajv)
  const headers = validator(ajv, doc, 'asyncapi.json', '#/components/schemas/WebhookHeaders')
  for (const { body, headers: sent } of delivered) {
    const message = doc.components.messages[COMPONENTS[body.type as string] as string]
    const fits = validator(ajv, doc, 'asyncapi.json', message.payload.$ref)
    t.ok(fits(body), `the delivered ${String(body.type)} fits its message's payload`)
    t.notOk(fits(broken(body)))
    t.ok(headers(sent), 'and its headers the message\'s headers')
  }
})

t.test('through the admin API (--url): the same documents, and --format jsonschema is GET /admin/event-types/schema.json', async (t) => {
  const serve = startCli(t, ['serve'], { env: { ...env, WEBHOOK_SECRET: 'whsec_cli_event_types_0123456789', ANVIL_ADMIN_TOKEN: TOKEN, HOST: '127.0.0.1', PORT: '0' } })
  const port = await serve.listeningPort('anvil serve: listening')
  const admin = { ...env, ANVIL_ADMIN_TOKEN: TOKEN }
  const openapi = await runCli(['event-types', 'export', '--format', 'openapi', '--url', `http://127.0.0.1:${port}`], { env: admin })
  t.equal(openapi.code, 0)
  t.equal(openapi.stderr, '', 'the whole catalog: nothing to warn of')
  t.same(JSON.parse(openapi.stdout), await exported('openapi'), 'the same OpenAPI document')
  const schema = await exported('jsonschema', ['--url', `http://127.0.0.1:${port}/admin`], admin)
  const served = await fetch(`http://127.0.0.1:${port}/admin/event-types/schema.json`, { headers: { authorization: `Bearer ${TOKEN}` } })
  t.same(schema, await served.json())
  t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema')
  const ajv = new Ajv2020({ strict: false, logger: false })
  addFormats(ajv)
  const fits = ajv.compile(schema)
  for (const { body } of delivered) {
    t.ok(fits(body), `the delivered ${String(body.type)} fits the one schema`)
    t.notOk(fits(broken(body)))
  }
  t.notOk(fits({ ...delivered[0]?.body, type: 'no.such.type' }), 'a type the catalog lacks fits none')
  await serve.stop()
})

t.test('from PostgreSQL a line on stderr says that types defined in code are not there (an empty catalog is no surprise); through --url none', async (t) => {
  const fromDb = await runCli(['event-types', 'export', '--format', 'jsonschema'], { env })
  t.equal(fromDb.code, 0)
  t.equal(fromDb.stderr, 'anvil: warning: read from the database, which holds only the types stored through the admin API (3); ' +
    'types defined in code (defineEventTypes) are not in it: give --url (your server, with ANVIL_ADMIN_TOKEN) for the whole catalog\n')
  t.ok(JSON.parse(fromDb.stdout), 'stdout is still the document alone')
  await migrate(db.url, { schema: 'empty_catalog' })
  const empty = await runCli(['event-types', 'export', '--format', 'openapi'], { env: { ...env, ANVIL_DB_SCHEMA: 'empty_catalog' } })
  t.match(empty, { code: 0, stderr: /holds only the types stored through the admin API \(none\); types defined in code/ })
})

t.test('a wrong --format, or neither database nor admin URL: one line, exit 1', async (t) => {
  // Refused before connecting anywhere: in this process, through the CLI's program (test/helpers/program.ts).
  const wrong = await refusal(['event-types', 'export', '--format', 'yaml'], env)
  t.equal(wrong.code, 1)
  t.equal(wrong.stderr, 'anvil: --format must be jsonschema, openapi, asyncapi (got "yaml")\n')
  const nowhere = await refusal(['event-types', 'export', '--format', 'openapi'])
  t.equal(nowhere.code, 1)
  t.match(nowhere.stderr, /^anvil: .*ANVIL_DATABASE_URL \(or --url with ANVIL_ADMIN_TOKEN\) is required: the catalog is in PostgreSQL/)
  t.equal(nowhere.stderr.split('\n').length, 2, 'one line')
})

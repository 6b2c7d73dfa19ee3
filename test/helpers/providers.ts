/**
 * The conformance checks every provider preset must pass, over real HTTP (fastify.inject) into a real
 * Redis: valid → 202 with the provider's event id and type on the job; tampered body, wrong secret and
 * (where timestamped) a stale timestamp → 401; a request signed with the older, still listed secret → 202;
 * a redelivery signed afresh → the same job, replayed: true.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import anvil from '../../index.js'
import type { SourceOptions } from '../../src/inbound/ingress-options.js'
import { createPresetScheme, DEFAULT_TOLERANCE_SECONDS, type ProviderName } from '../../src/providers/presets.js'
import { signRequest, type SignRequestOptions } from '../../src/testing/sign-request.js'
import type { Queue } from 'bullmq'
import type { WebhookJobData } from '../../src/queue/job-data.js'
import { inspectQueue } from './queue.js'
import { beforeStep } from './before-all.js'

export interface SignedParts {
  headers: Record<string, string>
  /** Path and query as sent; default the source's path. */
  url?: string
  /** The body as sent, when signing makes it (Linear signs a timestamp inside the body). */
  payload?: string
}

export interface SignOptions {
  /** Whatever the provider signs with: a secret, or a private key for Discord and SendGrid. */
  signer: unknown
  /** Seconds since the epoch. */
  timestamp: number
  /** The provider's delivery or event id, where it sends it in a header. */
  deliveryId: string
}

export interface ProviderSpec {
  source: Omit<SourceOptions, 'path'>
  path: string
  /** [current, older still listed, never listed] */
  signers: [unknown, unknown, unknown]
  body: (eventId: string) => string
  sign: (body: string, options: SignOptions) => SignedParts | Promise<SignedParts>
  timestamped: boolean
  /** False for GitLab, whose token does not depend on the body: there is no tampering to detect. */
  bindsBody?: boolean
  eventType: string | undefined
  /** The event id Anvil should read for a body made with `eventId` and a delivery id. */
  expectedEventId: (eventId: string, deliveryId: string) => string | undefined
  contentType?: string
  /** What the provider requires instead of 202 `{ jobId }` for an enqueued event (Discord's deferred response). */
  answer?: { statusCode: number, body: unknown }
  /** Fastify options, e.g. trustProxy. */
  fastify?: { trustProxy?: boolean }
}

const now = (): number => Math.floor(Date.now() / 1000)

export async function sourceApp (redisUrl: string, queueName: string, sources: SourceOptions[], fastify?: ProviderSpec['fastify']): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, trustProxy: fastify?.trustProxy ?? false })
  await app.register(anvil, { redis: redisUrl, queueName, sources, retrySchedule: [] })
  await app.ready()
  return app
}

/** `redis` is read in t.before, so a file's own setup (test/helpers/setup.ts) may give it. */
export function conformance (t: Test, redis: { readonly url: string }, spec: ProviderSpec): void {
  const provider = spec.source.provider ?? 'anvil'
  const queueName = `conf-${provider}`
  let app: FastifyInstance
  let queue: Queue<WebhookJobData>
  beforeStep(t, async () => {
    queue = inspectQueue(redis.url, queueName)
    app = await sourceApp(redis.url, queueName, [{ ...spec.source, path: spec.path }], spec.fastify)
  })
  t.teardown(async () => { await queue?.close(); await app?.close() })

  const send = async (body: string, options: SignOptions, tamper = false): Promise<{ statusCode: number, json: any }> => {
    const signed = await spec.sign(body, options)
    const sent = signed.payload ?? body
    const response = await app.inject({
      method: 'POST',
      url: signed.url ?? spec.path,
      headers: { 'content-type': spec.contentType ?? 'application/json', ...signed.headers },
      payload: tamper ? sent.replace(/.$/, (last) => ' ' + last) : sent
    })
    return { statusCode: response.statusCode, json: response.json() }
  }
  const accepted = spec.answer?.statusCode ?? 202
  /** The jobs holding an event id: how an acknowledged event (no jobId in the answer) is found. */
  const jobsOf = async (eventId: string | undefined): Promise<string[]> =>
    (await queue.getJobs()).filter((job) => job.data.eventId === eventId).map((job) => job.id as string)
  /** The job a request made: from the 202 answer, else by the event id. */
  const jobOf = async (res: { json: any }, eventId: string | undefined): Promise<string | undefined> =>
    spec.answer === undefined ? res.json.jobId : (await jobsOf(eventId))[0]

  t.test(`${provider}: valid → 202, with provider, event id and type on the job`, async (t) => {
    const res = await send(spec.body('evt_valid'), { signer: spec.signers[0], timestamp: now(), deliveryId: 'dlv_valid' })
    t.equal(res.statusCode, accepted, JSON.stringify(res.json))
    if (spec.answer === undefined) t.equal(res.json.replayed, false)
    else t.same(res.json, spec.answer.body)
    const job = await queue.getJob(await jobOf(res, spec.expectedEventId('evt_valid', 'dlv_valid')) ?? '')
    t.equal(job?.data.provider, provider)
    t.equal(job?.data.eventType, spec.eventType)
    t.equal(job?.data.eventId, spec.expectedEventId('evt_valid', 'dlv_valid'))
  })

  if (spec.bindsBody !== false) {
    t.test(`${provider}: tampered body → 401`, async (t) => {
      const res = await send(spec.body('evt_tamper'), { signer: spec.signers[0], timestamp: now(), deliveryId: 'dlv_tamper' }, true)
      t.equal(res.statusCode, 401)
      t.equal(res.json.code, 'ANVIL_ERR_SIGNATURE_INVALID')
    })
  }

  t.test(`${provider}: wrong secret → 401`, async (t) => {
    const res = await send(spec.body('evt_wrong'), { signer: spec.signers[2], timestamp: now(), deliveryId: 'dlv_wrong' })
    t.equal(res.statusCode, 401)
    t.equal(res.json.code, 'ANVIL_ERR_SIGNATURE_INVALID')
  })

  if (spec.timestamped) {
    // An hour away either way: far past the tolerance however slowly the request is handled. The boundary
    // itself (300 s in, 301 s out) is checked below against an explicit clock, never the wall clock.
    t.test(`${provider}: stale timestamp (either way) → 401 ANVIL_ERR_STALE`, async (t) => {
      for (const skew of [-3600, 3600]) {
        const res = await send(spec.body('evt_stale'), { signer: spec.signers[0], timestamp: now() + skew, deliveryId: 'dlv_stale' })
        t.equal(res.statusCode, 401, `skew ${skew}`)
        t.equal(res.json.code, 'ANVIL_ERR_STALE')
      }
    })

    t.test(`${provider}: the tolerance boundary, on an explicit clock: 300 s either way is fresh, 301 s is stale`, async (t) => {
      const signedAt = 1_767_225_600
      const scheme = createPresetScheme(provider, { secrets: spec.source.secrets ?? [], toleranceSeconds: DEFAULT_TOLERANCE_SECONDS })
      const body = spec.body('evt_boundary')
      const signed = await spec.sign(body, { signer: spec.signers[0], timestamp: signedAt, deliveryId: 'dlv_boundary' })
      const headers = Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value]))
      const verify = (skew: number): unknown => scheme.verify(Buffer.from(signed.payload ?? body), headers, { now: (signedAt + skew) * 1000 })
      for (const skew of [-300, 0, 300]) t.doesNotThrow(() => verify(skew), `${skew} s`)
      for (const skew of [-301, 301]) t.throws(() => verify(skew), { code: 'ANVIL_ERR_STALE' }, `${skew} s`)
    })
  }

  t.test(`${provider}: rotated secret (the older one, still listed) → 202`, async (t) => {
    const res = await send(spec.body('evt_rotated'), { signer: spec.signers[1], timestamp: now(), deliveryId: 'dlv_rotated' })
    t.equal(res.statusCode, accepted, JSON.stringify(res.json))
  })

  t.test(`${provider}: a redelivery signed afresh → the same job, replayed: true`, async (t) => {
    const body = spec.body('evt_redelivered')
    const first = await send(body, { signer: spec.signers[0], timestamp: now() - 60, deliveryId: 'dlv_re' })
    const again = await send(body, { signer: spec.signers[1], timestamp: now(), deliveryId: 'dlv_re' })
    t.equal(first.statusCode, accepted)
    t.equal(again.statusCode, accepted)
    if (spec.answer === undefined) {
      t.equal(again.json.jobId, first.json.jobId)
      t.same([first.json.replayed, again.json.replayed], [false, true])
    } else {
      t.equal((await jobsOf(spec.expectedEventId('evt_redelivered', 'dlv_re'))).length, 1, 'one job for both deliveries')
    }
  })
}

/** The testing kit's signature headers (src/testing/sign-request.ts, the one signer per provider), without its content-type: each test sets its own. */
export function kitHeaders (provider: ProviderName, options: SignRequestOptions): Record<string, string> {
  const { 'content-type': _contentType, ...headers } = signRequest(provider, options).headers
  return headers
}

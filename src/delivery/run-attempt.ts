/**
 * One attempt of one delivery job: settle what an earlier run left (a stall is a failed attempt; a message
 * delivered since by another job is not sent again), load the secrets, wait (as a delayed job) while the
 * endpoint's circuit is open or its rate is spent, sign, write the attempt as started, POST, complete it,
 * then decide: success, retry (BullMQ's backoff, with the receiver's Retry-After), or fail for good and maybe
 * disable the endpoint.
 */
import { DelayedError, UnrecoverableError, type Job } from 'bullmq'
import { sha256Hex } from '../signing/crypto.js'
import { databaseErrorKind } from '../db/database-errors.js'
import type { CircuitBreaker } from './circuit-breaker.js'
import type { EndpointGate } from './endpoint-gate.js'
import type { EndpointRateLimit } from './endpoint-rate-limit.js'
import type { AttemptReport, AttemptStart, DeliveryAttempt, DeliveryStore, OutboundJobData } from './delivery-job.js'
import type { EndpointDisabledEvent } from './delivery-options.js'
import { publishOutbound } from './outbound-channels.js'
import { endpointUrlProblem } from '../endpoints/endpoint-url.js'
import type { SendResult } from '../send/send-webhook.js'
import { sendToReceiver, type ReceiverDeps } from '../receiver-auth/send-to-receiver.js'
import { attemptHeaders } from './delivery-headers.js'
import { loggedHeaders } from '../send/attempt-headers.js'
import type { AnvilLogger } from '../shared/logger.js'
import type { Telemetry } from '../queue/telemetry.js'
import { attemptSpan } from './attempt-span.js'

/** A failed attempt that may be retried; the backoff strategy reads `retryAfterMs`. */
export class DeliveryFailure extends Error {
  constructor (message: string, readonly retryAfterMs?: number) {
    super(message)
    this.name = 'DeliveryFailure'
  }
}

export interface DeliverDeps extends ReceiverDeps {
  store: DeliveryStore
  httpsOnly: boolean
  circuit?: CircuitBreaker
  rateLimit?: EndpointRateLimit
  gate?: EndpointGate
  disableAfterMs: number
  onEndpointDisabled?: (event: EndpointDisabledEvent) => void
  onAttempt?: (attempt: DeliveryAttempt) => void
  /** An attempt span per POST of a traced message (src/queue/trace-context.ts). */
  telemetry?: Telemetry
  log: AnvilLogger
}

/** The entry of a worker without a per-endpoint cap. */
const UNGATED = { release () {} }

/** How long a delivery waits, not counted as an attempt, while its log cannot be written. */
export const LOG_UNAVAILABLE_RETRY_MS = 5000

/** The admission of a worker without a circuit breaker. */
const OPEN_ROAD = { send: true as const, probe: false, dirty: false }

/** An attempt that never reached the network (a bad URL, a gone endpoint). */
function refusedLocally (errorClass: string, errorMessage: string): SendResult {
  return { success: false, durationMs: 0, errorClass: errorClass as SendResult['errorClass'], errorMessage, responseHead: '' }
}

/** What the log needs to know of this attempt before its POST. */
export function attemptOf (job: Job<OutboundJobData>): AttemptStart {
  const { messageId, endpointId, body } = job.data
  return { messageId, endpointId, jobId: job.id as string, attempt: job.attemptsMade + 1, payloadSha256: sha256Hex(body) }
}

export async function runAttempt (job: Job<OutboundJobData>, token: string | undefined, deps: DeliverDeps): Promise<void> {
  const data = job.data
  const { endpointId } = data
  const { store } = deps
  // This attempt's POST was answered and its outcome waited for the log: written now, never sent again.
  const answered = data.answered
  if (answered !== undefined && answered.attempt === job.attemptsMade + 1) {
    const recorded = await recordOutcome(job, token, deps, answered.result, answered.deliveryId, answered.sent, answered.report)
    return await decide(job, deps, answered.result, recorded)
  }
  // A retry, or a run after a stall: what the last run left is settled before anything is sent.
  if ((job.attemptsMade > 0 || job.stalledCounter > 0) && store.resumeAttempt !== undefined) {
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
    const resumed = await logged(job, token, deps, store.resumeAttempt({
      ...attemptOf(job), stalls: job.stalledCounter, since: new Date(job.timestamp), ...(last ? { exhausted: exhaustion(data) } : {})
    }))
    if (resumed.delivered) {
      deps.log.info({ jobId: job.id, endpointId }, 'anvil delivery: delivered since by another job (a hand retry or recover); not sent again')
      return
    }
    if (resumed.decided !== undefined) {
      // The attempt had logged its outcome when its worker stopped: that outcome counts, and nothing is sent again.
      const { httpStatus, errorClass } = resumed.decided
      deps.log.warn({ jobId: job.id, endpointId, attempt: job.attemptsMade + 1 }, 'anvil delivery: the last run stopped after logging its outcome; that outcome counts')
      if (httpStatus === 410) {
        await disable(deps, endpointId, 'the endpoint answered 410 Gone', data.operational === true)
        throw new UnrecoverableError('HTTP 410: the endpoint is gone and was disabled')
      }
      throw new DeliveryFailure(`${errorClass ?? 'failed'}: logged before the worker stopped`)
    }
    if (resumed.stalled) {
      deps.log.warn({ jobId: job.id, endpointId, attempt: job.attemptsMade + 1 }, 'anvil delivery: the last run stalled; counted as a failed attempt')
      publishOutbound('delivered', () => ({ endpointId, eventType: data.eventType, outcome: 'stalled', durationMs: 0 }))
      throw new DeliveryFailure('stalled: the worker stopped during this attempt')
    }
  }
  const state = await logged(job, token, deps, store.loadEndpoint !== undefined
    ? store.loadEndpoint(endpointId)
    : store.loadSecrets(endpointId).then((secrets) => ({ enabled: true, rateLimit: null, secrets })))
  const urlProblem = endpointUrlProblem(data.url, { httpsOnly: deps.httpsOnly })
  const refusal = state === undefined || state.secrets.length === 0
    ? refusedLocally('endpoint_gone', 'the endpoint no longer exists or has no secret')
    : !state.enabled ? refusedLocally('endpoint_disabled', 'the endpoint is disabled')
        : urlProblem !== undefined ? refusedLocally('invalid_url', `the endpoint URL ${urlProblem}`) : undefined
  if (refusal !== undefined) {
    await note(job, deps, refusal)
    throw new UnrecoverableError(refusal.errorMessage)
  }
  const { rateLimit } = state as NonNullable<typeof state>

  const entering = deps.gate === undefined ? UNGATED : deps.gate.enter(endpointId)
  const entry = entering instanceof Promise ? await entering : entering
  if ('retryAt' in entry) await wait(job, token, entry.retryAt)
  let result: SendResult
  let deliveryId: string | undefined
  let admission: { send: true, probe: boolean, dirty: boolean }
  let posted = false
  let sent: Record<string, string> | undefined
  try {
    if (rateLimit !== null && deps.rateLimit !== undefined) {
      const retryAt = await deps.rateLimit.take(endpointId, rateLimit)
      if (retryAt !== undefined) await wait(job, token, retryAt)
    }
    const admitted = deps.circuit === undefined ? OPEN_ROAD : deps.circuit.admitCached(endpointId) ?? await deps.circuit.admit(endpointId)
    if (!admitted.send) await wait(job, token, admitted.retryAt)
    admission = admitted as typeof admission
    const timestamp = Math.floor(Date.now() / 1000)
    // In the log before the POST: a crash mid-POST leaves a row whose outcome is unknown, and a re-send is a row of its own.
    deliveryId = store.startAttempt === undefined ? undefined : await logged(job, token, deps, store.startAttempt(attemptOf(job)))
    const span = attemptSpan(deps.telemetry, job)
    const headers = attemptHeaders(data, state as NonNullable<typeof state>, timestamp, span?.context)
    sent = headers.logged
    result = await sendToReceiver(endpointId, { url: data.url, headers: headers.sent, body: data.body }, state as NonNullable<typeof state>, deps)
    span?.end(result)
    posted = true
  } finally {
    // Put back without a POST (rate, circuit, an unreachable log): no answer, quick or slow, to learn from.
    (entry as { release: (delivered: boolean) => void }).release(posted)
  }

  let circuitOpened = false
  if (deps.circuit !== undefined) {
    const change = await deps.circuit.record(endpointId, result.success, admission).catch((err: Error) => {
      deps.log.warn({ endpointId, err: err.message }, 'anvil delivery: circuit state not written')
      return undefined
    })
    if (change !== undefined) {
      deps.log.warn({ endpointId }, `anvil delivery: circuit ${change}`)
      publishOutbound('circuit', () => ({ endpointId, open: change === 'opened' }))
    }
    // A failed probe keeps it open: reported again, so an opening whose report a crash lost is reported late, not
    // never. A 410 is reported as the endpoint's disabling instead.
    circuitOpened = (change === 'opened' || (!result.success && admission.probe)) && result.httpStatus !== 410
  }
  const operational = data.operational === true
  const exhausted = !result.success && result.httpStatus !== 410 && job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
  const recorded = await recordOutcome(job, token, deps, result, deliveryId, loggedHeaders(sent), { eventType: data.eventType, operational, circuitOpened, exhausted, jobId: job.id as string })
  return await decide(job, deps, result, recorded)
}

/** What an attempt's outcome, once logged, makes of the job: done, retried, or failed for good (the endpoint maybe disabled). */
async function decide (job: Job<OutboundJobData>, deps: DeliverDeps, result: SendResult, recorded: Recorded): Promise<void> {
  const { endpointId } = job.data
  const operational = job.data.operational === true
  // Nothing returned: BullMQ would store a return value with every completed job.
  if (result.success) {
    // Failures are logged per attempt; without this line an endpoint's recovery would never show.
    const since = recorded?.recoveredFrom
    if (since instanceof Date) deps.log.info({ endpointId, failingSince: since.toISOString(), failedForMs: Date.now() - since.getTime() }, 'anvil delivery: endpoint recovered')
    return
  }

  if (result.httpStatus === 410) {
    await disable(deps, endpointId, 'the endpoint answered 410 Gone', operational)
    throw new UnrecoverableError('HTTP 410: the endpoint is gone and was disabled')
  }
  const failingSince = recorded?.failingSince
  if (deps.disableAfterMs > 0 && failingSince instanceof Date && Date.now() - failingSince.getTime() >= deps.disableAfterMs) {
    await disable(deps, endpointId, `only failures since ${failingSince.toISOString()}`, operational)
    throw new UnrecoverableError(`${result.errorMessage ?? 'failed'}; the endpoint has only failed for too long and was disabled`)
  }
  throw new DeliveryFailure(`${result.errorClass ?? 'failed'}: ${result.errorMessage ?? ''}`, result.retryAfterMs)
}

/** What a stall that ends a job's attempts reports. */
export function exhaustion (data: OutboundJobData): { eventType: string, operational: boolean } {
  return { eventType: data.eventType, operational: data.operational === true }
}

/** Puts the job back as delayed: it holds no worker slot while its endpoint cannot take it. */
async function wait (job: Job<OutboundJobData>, token: string | undefined, retryAt: number): Promise<never> {
  await job.moveToDelayed(retryAt, token)
  throw new DelayedError()
}

/**
 * A read or write of the store before a POST; while the store cannot answer the job waits, its attempt not
 * counted, so no delivery is sent unlogged and none ends for want of its log.
 */
async function logged<T> (job: Job<OutboundJobData>, token: string | undefined, deps: DeliverDeps, write: Promise<T>): Promise<T> {
  try {
    return await write
  } catch (err) {
    // Only an unreachable database waits; any other error (a missing migration, a bug) fails the attempt as usual.
    if (databaseErrorKind(err) !== 'unavailable') throw err
    deps.log.warn({ jobId: job.id, err: (err as Error).message, retryInMs: LOG_UNAVAILABLE_RETRY_MS }, 'anvil delivery: the delivery store cannot be reached; the delivery waits')
    return await wait(job, token, Date.now() + LOG_UNAVAILABLE_RETRY_MS)
  }
}

/** How often an outcome's write is run again at once after PostgreSQL failed it to break a conflict. */
const CONFLICT_TRIES = 3

/**
 * The outcome of a POST, written as the receiver answered it. A write PostgreSQL failed to break a conflict runs
 * again; while the database is out of reach the outcome waits in the job's data, the attempt not counted, and
 * the next run writes it without sending again: an answered POST is never logged as a failure or a stall.
 */
async function recordOutcome (job: Job<OutboundJobData>, token: string | undefined, deps: DeliverDeps, result: SendResult,
  deliveryId: string | undefined, sent: Record<string, string> | undefined, report: AttemptReport): Promise<Recorded> {
  for (let tries = 1; ; tries++) {
    try {
      return await note(job, deps, result, deliveryId, sent, report)
    } catch (err) {
      const kind = databaseErrorKind(err)
      if (kind === 'conflict' && tries < CONFLICT_TRIES) continue
      if (kind !== 'unavailable' && kind !== 'conflict') throw err
      deps.log.warn({ jobId: job.id, err: (err as Error).message, retryInMs: LOG_UNAVAILABLE_RETRY_MS }, 'anvil delivery: the outcome could not be logged; it waits in the job')
      // The request's headers as the log keeps them (redacted), never the signing secret.
      const answered = { attempt: job.attemptsMade + 1, result, report, ...(deliveryId === undefined ? {} : { deliveryId }), ...(sent === undefined ? {} : { sent }) }
      await job.updateData({ ...job.data, answered })
      return await wait(job, token, Date.now() + LOG_UNAVAILABLE_RETRY_MS)
    }
  }
}

/** Writes the attempt (the delivery log, else the job's log), then tells the hooks and the metrics. */
type Recorded = { failingSince?: Date | null, recoveredFrom?: Date } | undefined

async function note (
  job: Job<OutboundJobData>, deps: DeliverDeps, result: SendResult, deliveryId?: string, sent?: Record<string, string>, report?: AttemptReport
): Promise<Recorded> {
  const { messageId, endpointId, eventType, body } = job.data
  const attempt: DeliveryAttempt = {
    messageId,
    endpointId,
    attempt: job.attemptsMade + 1,
    durationMs: result.durationMs,
    responseHead: result.responseHead,
    payloadSha256: sha256Hex(body),
    success: result.success
  }
  if (deliveryId !== undefined) attempt.deliveryId = deliveryId
  const requestHeaders = loggedHeaders(sent)
  if (requestHeaders !== undefined) attempt.requestHeaders = requestHeaders
  if (result.responseHeaders !== undefined) attempt.responseHeaders = result.responseHeaders
  // Set only when known: the log tells an attempt that got no answer from one that did.
  if (result.httpStatus !== undefined) attempt.httpStatus = result.httpStatus
  if (result.errorClass !== undefined) {
    attempt.errorClass = result.errorClass
    attempt.errorMessage = result.errorMessage
  }
  let recorded: Recorded
  if (deps.store.recordAttempt !== undefined) {
    recorded = (await deps.store.recordAttempt(attempt, report)) ?? undefined
  } else {
    await job.log(JSON.stringify(attempt))
  }
  if (deps.onAttempt !== undefined) callHook(deps, 'onAttempt', () => deps.onAttempt?.(attempt))
  publishOutbound('delivered', () => ({ endpointId, eventType, outcome: result.success ? 'success' : result.errorClass ?? 'failed', durationMs: result.durationMs }))
  return recorded
}

async function disable (deps: DeliverDeps, endpointId: string, reason: string, operational: boolean): Promise<void> {
  const disabled = await deps.store.disableEndpoint?.(endpointId, reason, operational) ?? false
  if (!disabled) return
  deps.log.warn({ endpointId, reason }, 'anvil delivery: endpoint disabled')
  publishOutbound('endpointDisabled', () => ({ endpointId, reason }))
  callHook(deps, 'onEndpointDisabled', () => deps.onEndpointDisabled?.({ endpointId, reason }))
}

/** A user's hook that throws is logged, never taken for the delivery's failure. */
function callHook (deps: DeliverDeps, name: string, hook: () => unknown): void {
  try {
    hook()
  } catch (err) {
    deps.log.error({ hook: name, err: (err as Error).message }, 'anvil delivery: hook threw')
  }
}

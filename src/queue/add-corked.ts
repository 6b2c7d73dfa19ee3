import { Job, type JobJson, type JobsOptions, type Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { JOB_NAME } from '../shared/constants.js'
import type { WebhookJobData } from './job-data.js'

/** One job of a batch: its data, its id, and its own options (BullMQ merges in the queue's defaults only on `add`). */
export interface BatchJob { data: WebhookJobData, opts: JobsOptions & { jobId: string } }

/**
 * Adds a batch of jobs with one socket write and no pipeline object: `Queue.addBulk`'s pipeline gets a copy of
 * every script BullMQ defined, per batch. Each add goes through BullMQ's public `addJobToTransaction`, which
 * writes before it first awaits, so a corked socket sends them together. Each add is atomic on its own, as in
 * `addBulk`. One Redis server only: a cluster client writes to sockets of its own (the caller uses `addBulk`).
 */
export async function addCorked (queue: Queue<WebhookJobData>, connection: Redis, jobs: BatchJob[]): Promise<string[]> {
  const client = await queue.backend.client
  // Every job is checked and serialised before the first is sent, so a throw here sends nothing.
  const check = optionsCheckOf(queue)
  const serialised = jobs.map((job) => check.validated(toJobJson(job)))
  const socket = connection.stream
  const added: Array<Promise<string>> = []
  socket?.cork()
  try {
    for (const job of serialised) added.push(queue.backend.addJobToTransaction(client, job, job.id))
  } finally {
    socket?.uncork()
  }
  return await Promise.all(added)
}

/**
 * BullMQ's own check of a new job's options, as `Queue.add` runs it (`Job#validateOptions`, protected, reached
 * from a subclass): one instance per queue, given each job's options in turn, so no `Job` is built per add.
 */
class JobOptionsCheck extends Job<WebhookJobData> {
  validated (json: JobJson): JobJson {
    // `toJobJson` carries no parent keys, so a child job would be added as an orphan.
    if (json.opts.parent !== undefined) throw new Error('a corked add cannot make a child job (parent)')
    this.opts = json.opts
    this.validateOptions(json)
    return json
  }
}

const checks = new WeakMap<Queue<WebhookJobData>, JobOptionsCheck>()

function optionsCheckOf (queue: Queue<WebhookJobData>): JobOptionsCheck {
  let check = checks.get(queue)
  if (check === undefined) {
    check = new JobOptionsCheck(queue, JOB_NAME, undefined as unknown as WebhookJobData)
    checks.set(queue, check)
  }
  return check
}

/**
 * A new job's stored form, as `new Job(…).asJSON()` makes it for a standard job, without the `Job` (it showed
 * in the ingress's CPU profile). `jobOptions()` already gives the options BullMQ would normalise them to;
 * test/inbound/add-batch.test.ts holds such a job equal to one added through `Queue.add`.
 */
function toJobJson ({ data, opts }: BatchJob): JobJson {
  return {
    id: opts.jobId,
    name: JOB_NAME,
    // A Buffer, which BullMQ hands to ioredis as it is: in ioredis' buffer mode (BullMQ's msgpack arguments put
    // the command there) a string argument is measured, joined and encoded again, a Buffer copied once.
    data: Buffer.from(JSON.stringify(data)) as unknown as string,
    opts,
    progress: 0,
    attemptsMade: 0,
    attemptsStarted: 0,
    stalledCounter: 0,
    timestamp: Date.now(),
    deduplicationId: opts.deduplication?.id,
    failedReason: 'null',
    returnvalue: 'null'
  }
}

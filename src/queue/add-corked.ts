import { Job, type JobJson, type JobsOptions, type Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { JOB_NAME } from '../shared/constants.js'
import type { WebhookJobData } from './job-data.js'

/** One job of a batch: its data, its id, and its own options (BullMQ merges in the queue's defaults only on `add`). */
export interface BatchJob { data: WebhookJobData, opts: JobsOptions & { jobId: string } }

/**
 * Adds a batch of jobs with one socket write and no pipeline object.
 *
 * `Queue.addBulk` builds an ioredis pipeline per batch, onto which ioredis copies every script BullMQ defined
 * on the connection: that costs more CPU than a job's own script call (bench/README.md). Instead, each job's
 * add script is sent through BullMQ's `addJobToTransaction`, which is public so that batches can share a
 * transaction; it writes its command before it first awaits. With the socket corked around the loop, the
 * commands leave in one write.
 *
 * Only on one Redis server: a cluster client writes to node sockets of its own (the caller uses `addBulk`).
 * The adds are independent, as in `addBulk`'s pipeline: each job's script is atomic on its own.
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
 * The stored form of a new job, as `new Job(…).asJSON()` makes it for a standard job (no parent, delay,
 * priority or repeat), without building a `Job` first: the Job object and `asJSON` showed in the ingress's
 * CPU profile, and nothing here reads the object. The options are used as given: `jobOptions()` sets
 * `attempts` and an object `backoff`, which is what BullMQ's constructor would normalise them to.
 * test/add-batch.test.ts holds a job added this way equal to one added through `Queue.add`.
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

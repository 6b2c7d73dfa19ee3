import type { JobJson, JobsOptions, Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { JOB_NAME } from '../shared/constants.js'
import type { WebhookJobData } from './job-data.js'

/** One job of a batch: its data, its id, and its own options (BullMQ merges in the queue's defaults only on `add`). */
export interface BatchJob { data: WebhookJobData, opts: JobsOptions & { jobId: string } }

/**
 * Adds a batch of jobs with one socket write and no pipeline object.
 *
 * `Queue.addBulk` builds an ioredis pipeline per batch, and ioredis copies every script BullMQ defined on the
 * connection (64 of them) onto each new pipeline: about 65 µs of CPU per batch on our 2-core machine
 * (bench/README.md), more than a job's own script call. Instead, each job's add script is sent through
 * BullMQ's `addJobToTransaction`, which is public so that batches can share a transaction; it writes its
 * command before it first awaits. With the socket corked around the loop, the commands leave in one write.
 *
 * Only on one Redis server: a cluster client writes to node sockets of its own (the caller uses `addBulk`).
 * The adds are independent, as in `addBulk`'s pipeline: each job's script is atomic on its own.
 */
export async function addCorked (queue: Queue<WebhookJobData>, connection: Redis, jobs: BatchJob[]): Promise<string[]> {
  const client = await queue.backend.client
  // Every job is serialised before the first is sent, so a throw here sends nothing.
  const serialised = jobs.map(toJobJson)
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
 * The stored form of a new job, as `new Job(…).asJSON()` makes it for a standard job (no parent, delay,
 * priority or repeat), without building a `Job` first: the Job object (its constructor copies the options and
 * binds a key function) and `asJSON` were about 3 % of the ingress's CPU in a profile, and nothing here reads
 * the object. The options are used as given: `jobOptions()` sets `attempts` and an object `backoff`, which is
 * what BullMQ's constructor would normalise them to. BullMQ's own checks of the options (`validateOptions`,
 * protected) are not run: what they refuse cannot occur here, since job ids are `e_` + a UUID and dedupe ids
 * are sha256 hex (src/inbound/idempotency.ts), with no priority, parent or size limit. test/add-batch.test.ts holds a
 * job added this way equal to one added through `Queue.add`.
 */
function toJobJson ({ data, opts }: BatchJob): JobJson {
  return {
    id: opts.jobId,
    name: JOB_NAME,
    // A Buffer, which BullMQ passes on to ioredis as it is: BullMQ's msgpack arguments put the command in
    // ioredis' buffer mode, where a string argument (the job's JSON, hundreds of bytes and more) is measured
    // three times, joined into a new string and encoded again; a Buffer is copied once. Redis stores the same
    // bytes either way.
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

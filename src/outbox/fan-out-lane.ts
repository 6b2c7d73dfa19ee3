/**
 * Delivery jobs go to Redis in chunks, the tenants' chunks in turn, a few chunks at a time. One process's
 * fan-outs share a Redis connection, and BullMQ adds a bulk in one MULTI: a message to 300 endpoints was 300
 * jobs in one block, and ten such messages at once put 3,000 jobs on the connection before a quiet tenant's
 * one job. Here that job waits for the chunks in flight and one chunk of each tenant ahead of it in turn.
 * A fan-out whose chunk fails stops there (its chunks not yet sent are not sent) and rejects; the jobs already
 * added keep their ids, so the fan-out's next try adds only the rest.
 */

/** Jobs a chunk holds, and chunks in flight at once. */
export const LANE_CHUNK = 50
export const LANE_IN_FLIGHT = 2

export interface FanOutLane {
  /** Adds `jobs` of `tenant` through `add` (one call a chunk); the answers in order. */
  add: <J, R>(tenant: string | null, jobs: readonly J[], add: (chunk: J[]) => Promise<R[]>) => Promise<R[]>
}

interface Chunk { run: () => Promise<void> }

export function createFanOutLane (chunkSize = LANE_CHUNK, inFlight = LANE_IN_FLIGHT): FanOutLane {
  // A tenant's chunks waiting, tenants in turn order: the one served goes to the back.
  const waiting = new Map<string, Chunk[]>()
  let running = 0

  function pump (): void {
    while (running < inFlight) {
      const next = waiting.entries().next()
      if (next.done === true) return
      const [tenant, chunks] = next.value
      waiting.delete(tenant)
      const chunk = chunks.shift() as Chunk
      if (chunks.length > 0) waiting.set(tenant, chunks)
      running++
      void chunk.run().finally(() => { running--; pump() })
    }
  }

  return {
    async add (tenant, jobs, add) {
      const key = tenant ?? ''
      const parts = Array.from({ length: Math.ceil(jobs.length / chunkSize) }, (_, i) => jobs.slice(i * chunkSize, (i + 1) * chunkSize))
      let failed = false
      const answers = parts.map(async (part) => await new Promise<Awaited<ReturnType<typeof add>>>((resolve, reject) => {
        const chunk: Chunk = {
          async run () {
            if (failed) { reject(new Error('an earlier chunk of this fan-out failed')); return }
            try { resolve(await add(part)) } catch (err) { failed = true; reject(err) }
          }
        }
        const queued = waiting.get(key)
        if (queued === undefined) waiting.set(key, [chunk])
        else queued.push(chunk)
      }))
      pump()
      // Every chunk settles before the fan-out answers, so none is still running when its caller gives the row back.
      const settled = await Promise.allSettled(answers)
      const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
      if (rejected !== undefined) throw rejected.reason
      return settled.flatMap((s) => (s as PromiseFulfilledResult<Awaited<ReturnType<typeof add>>>).value)
    }
  }
}

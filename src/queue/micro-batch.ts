/**
 * Gathers calls made in the same turn of the event loop into one batch. Requests that arrive together
 * then share one Redis pipeline: one socket write and one round trip instead of one each.
 * A batch is flushed on `setImmediate` (after the I/O callbacks that queued it), or at `maxBatch`.
 */
export class MicroBatch<I, O> {
  private pending: Array<{ item: I, resolve: (value: O) => void, reject: (err: unknown) => void }> = []
  private scheduled: NodeJS.Immediate | undefined

  constructor (
    private readonly flushBatch: (items: I[]) => Promise<O[]>,
    private readonly maxBatch: number
  ) {}

  add (item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject })
      if (this.pending.length >= this.maxBatch) this.flush()
      else this.scheduled ??= setImmediate(() => this.flush())
    })
  }

  private flush (): void {
    if (this.scheduled !== undefined) clearImmediate(this.scheduled)
    this.scheduled = undefined
    const batch = this.pending
    this.pending = []
    if (batch.length === 0) return
    this.flushBatch(batch.map((entry) => entry.item)).then((results) => {
      batch.forEach((entry, i) => entry.resolve(results[i] as O))
    }, (err: unknown) => {
      for (const entry of batch) entry.reject(err)
    })
  }
}

/**
 * Group commit for the journal's writes: calls made while the writes in flight run wait and go together in
 * the next one, so under load one statement carries many events, and alone a call costs one round trip. A few
 * writes run at once (PostgreSQL then shares one disk flush among their commits).
 */
export class WriteBatcher<I, R = void> {
  private pending: Array<{ item: I, resolve: (result: R) => void, reject: (err: unknown) => void }> = []
  private inFlight = 0
  private scheduled = false

  /** `write` settles each item, in the items' order: one item's failure need not be the others'. */
  constructor (
    private readonly write: (items: I[]) => Promise<Array<PromiseSettledResult<R>>>,
    private readonly maxBatch: number,
    private readonly maxInFlight = 1
  ) {}

  add (item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject })
      this.schedule()
    })
  }

  /** On the next turn, so the calls of this one join the batch. */
  private schedule (): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.pending.length === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.flush()
    })
  }

  private flush (): void {
    if (this.inFlight >= this.maxInFlight || this.pending.length === 0) return
    const batch = this.pending.splice(0, this.maxBatch)
    this.inFlight++
    this.write(batch.map((entry) => entry.item)).then(
      (results) => {
        batch.forEach((entry, i) => {
          const result = results[i]
          if (result?.status === 'fulfilled') entry.resolve(result.value)
          else entry.reject(result?.reason)
        })
      },
      (err: unknown) => { for (const entry of batch) entry.reject(err) }
    ).finally(() => {
      this.inFlight--
      this.schedule()
    })
    this.schedule()
  }
}

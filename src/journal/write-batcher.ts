/**
 * Group commit for the journal's writes: calls made while a write is in flight wait and go together in the
 * next one, so under load one statement carries many events, and alone a call costs one round trip.
 */
export class WriteBatcher<I> {
  private pending: Array<{ item: I, resolve: () => void, reject: (err: unknown) => void }> = []
  private flushing = false

  constructor (
    private readonly write: (items: I[]) => Promise<void>,
    private readonly maxBatch: number
  ) {}

  add (item: I): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject })
      if (!this.flushing) {
        this.flushing = true
        setImmediate(() => { void this.drain() })
      }
    })
  }

  private async drain (): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch)
      try {
        await this.write(batch.map((entry) => entry.item))
        for (const entry of batch) entry.resolve()
      } catch (err) {
        for (const entry of batch) entry.reject(err)
      }
    }
    this.flushing = false
  }
}

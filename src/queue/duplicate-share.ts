/**
 * How many recent events were duplicates, as a moving average. During a redelivery storm most events
 * are, and a read of the dedupe key (one MGET for a batch) answers them for a fraction of what an add
 * costs: no job is built, serialised or scripted. In ordinary traffic the read would be one more command
 * per event for nothing, so it is only made while duplicates are the likely case.
 */
export class DuplicateShare {
  private share = 0

  /**
   * @param weight how much one event moves the average (1/weight events is its memory)
   * @param threshold the share above which a read first pays off; an add costs several reads
   */
  constructor (
    private readonly weight = DUPLICATE_SHARE_WEIGHT,
    private readonly threshold = DUPLICATE_SHARE_THRESHOLD
  ) {}

  note (duplicate: boolean): void {
    this.share += this.weight * ((duplicate ? 1 : 0) - this.share)
  }

  /** True while reading the dedupe key first is the cheaper bet. */
  get likely (): boolean {
    return this.share > this.threshold
  }
}

/** About the last 50 events count. */
export const DUPLICATE_SHARE_WEIGHT = 0.02
/** Past a third of duplicates the read pays: it costs a small part of an add (bench/README.md). */
export const DUPLICATE_SHARE_THRESHOLD = 1 / 3

/** A periodic chore (a sweep, a retention pass) on a timer that never holds the process open. */
export interface Repeating {
  /** No run after this one; resolves once the run in flight (if any) has settled. */
  stop (): Promise<void>
}

/** Node runs a longer setTimeout at once (it clamps the delay to 1 ms): longer intervals wait this long instead. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Runs `task` `intervalMs` after the previous run settled (the first at once with `immediate`), so two runs
 * never overlap, until stopped; a run that fails goes to `onError` and the next one comes as usual.
 */
export function every (intervalMs: number, task: () => Promise<unknown>, onError: (err: Error) => void, options: { immediate?: boolean } = {}): Repeating {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  function run (): void {
    running = task().then(() => {}, onError).finally(() => {
      running = undefined
      schedule()
    })
  }
  function schedule (): void {
    if (stopped) return
    timer = setTimeout(run, Math.min(intervalMs, MAX_TIMER_MS))
    timer.unref()
  }
  if (options.immediate === true) run()
  else schedule()
  return {
    async stop () {
      stopped = true
      clearTimeout(timer)
      await running
    }
  }
}

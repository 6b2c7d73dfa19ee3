/** A periodic chore (a sweep, a retention pass) on a timer that never holds the process open. */
export interface Repeating {
  stop (): void
}

/**
 * Runs `task` `intervalMs` after the previous run settled, so two runs never overlap, until stopped; a run
 * that fails goes to `onError` and the next one comes as usual. Stopping does not wait for a run in flight.
 */
export function every (intervalMs: number, task: () => Promise<unknown>, onError: (err: Error) => void): Repeating {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  function schedule (): void {
    if (stopped) return
    timer = setTimeout(() => { task().catch(onError).finally(schedule) }, intervalMs)
    timer.unref()
  }
  schedule()
  return {
    stop () {
      stopped = true
      clearTimeout(timer)
    }
  }
}

// The soak's worker handler: fails 5 % of attempts at random, always fails events marked `fail`, and
// reports every completion (by job id) to the soak over the worker process's IPC channel, not to Redis,
// so the soak's bookkeeping does not count in Redis memory.
const FLAKY = 0.05

export default async function handler (event) {
  const body = event.json()
  if (body.fail === true) throw new Error('this event always fails')
  if (Math.random() < FLAKY) throw new Error('flaky downstream')
  process.send?.({ completed: event.id })
}

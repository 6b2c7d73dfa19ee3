/** The periodic chore behind the dead-letter sweep and both retention passes (src/time/every.ts). */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { every } from '../src/time/every.js'
import { inBatches } from '../src/db/batched-delete.js'
import { eventually } from './helpers/eventually.js'

t.test('immediate runs the first pass at once; an interval past 2^31-1 ms waits instead of running in a loop', async (t) => {
  let runs = 0
  const thirtyDays = 30 * 24 * 3_600_000
  const repeating = every(thirtyDays, async () => { runs++ }, (err) => { throw err }, { immediate: true })
  await sleep(100)
  await repeating.stop()
  t.equal(runs, 1, 'one pass at start, none since (Node would have clamped the timer to 1 ms)')
})

t.test('runs never overlap, and stop waits for the run in flight', async (t) => {
  let inFlight = 0
  let most = 0
  let finished = 0
  const repeating = every(1, async () => {
    inFlight++
    most = Math.max(most, inFlight)
    await sleep(30)
    inFlight--
    finished++
  }, (err) => { throw err }, { immediate: true })
  await sleep(100)
  const before = finished
  await repeating.stop()
  t.equal(most, 1, 'one run at a time')
  t.equal(inFlight, 0, 'stop resolved after the run in flight settled')
  const stoppedAt = finished
  t.ok(stoppedAt >= before)
  await sleep(50)
  t.equal(finished, stoppedAt, 'nothing runs after stop')
})

t.test('a failing run goes to onError and the next one still comes', async (t) => {
  const errors: string[] = []
  let runs = 0
  const repeating = every(5, async () => { runs++; throw new Error(`pass ${runs}`) }, (err) => { errors.push(err.message) })
  await eventually('two runs', () => runs >= 2)
  await repeating.stop()
  t.same(errors.slice(0, 2), ['pass 1', 'pass 2'])
})

t.test('a delete batch below 1 is refused rather than looping for ever', async (t) => {
  await t.rejects(inBatches(0, async () => 0), RangeError)
  t.equal(await inBatches(2, async () => 1), 1, 'a step deleting fewer than the batch ends the pass')
})

import t from 'tap'
import {
  STANDARD_WEBHOOKS_SCHEDULE_MS, deliveryJobOptions, nextDelay, resolveSchedule, RetryScheduleSettingSchema
} from '../../src/delivery/delivery-schedule.js'
import { compileCheck } from '../../src/shared/validate.js'

const low = (): number => 0
const high = (): number => 1
const middle = (): number => 0.5

t.test("the default is Standard Webhooks' schedule, ten tries in all, ±20 % jitter", async (t) => {
  const schedule = resolveSchedule()
  t.same(schedule, [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 504e5, 72e6, 864e5])
  t.same(deliveryJobOptions(schedule), { attempts: 10, backoff: { type: 'anvil-outbound' } })
  schedule.forEach((base, i) => {
    t.equal(nextDelay(schedule, i + 1, { random: middle }), base)
    t.equal(nextDelay(schedule, i + 1, { random: low }), Math.round(base * 0.8))
    t.equal(nextDelay(schedule, i + 1, { random: high }), Math.round(base * 1.2))
  })
  t.equal(nextDelay(schedule, 10), -1, 'after the last attempt: no retry (never 0, which is "now")')
  const drawn = Array.from({ length: 200 }, () => nextDelay(schedule, 2))
  t.same(drawn.filter((delay) => delay < 240_000 || delay > 360_000), [], 'every draw within ±20 %')
  t.ok(new Set(drawn).size > 100, 'and spread over the range')
})

t.test('"3 attempts, exponential" is one line', async (t) => {
  const schedule = resolveSchedule({ attempts: 3, exponentialMs: 1000 })
  t.same(schedule, [1000, 2000])
  t.same(deliveryJobOptions(schedule).attempts, 3)
  t.same(resolveSchedule({ attempts: 1, exponentialMs: 1000 }), [], 'one attempt: no retry')
  t.equal(resolveSchedule({ attempts: 40, exponentialMs: 1000 }).at(-1), 86_400_000, 'a step is at most a day')
  t.same(resolveSchedule([100, 200]), [100, 200])
  t.equal(resolveSchedule('standard-webhooks'), STANDARD_WEBHOOKS_SCHEDULE_MS)
})

t.test('Retry-After pushes the retry back, within its bound, never forward', async (t) => {
  const schedule = [5000, 300_000]
  t.equal(nextDelay(schedule, 1, { random: middle, retryAfterMs: 60_000 }), 60_000)
  t.equal(nextDelay(schedule, 2, { random: middle, retryAfterMs: 60_000 }), 300_000, 'the schedule asks for longer')
  t.equal(nextDelay(schedule, 1, { random: middle, retryAfterMs: 10 * 3_600_000 }), 3_600_000, 'bounded at an hour by default')
  t.equal(nextDelay(schedule, 1, { random: middle, retryAfterMs: 120_000, retryAfterMaxMs: 30_000 }), 30_000)
  t.equal(nextDelay(schedule, 3, { retryAfterMs: 1000 }), -1, 'no retry left, whatever the receiver asks')
})

t.test('the setting is checked', async (t) => {
  const check = compileCheck(RetryScheduleSettingSchema)
  t.equal(check('standard-webhooks'), undefined)
  t.equal(check([1000, 2000]), undefined)
  t.equal(check({ attempts: 3, exponentialMs: 1000 }), undefined)
  t.ok(check({ attempts: 0, exponentialMs: 1000 }))
  t.ok(check({ attempts: 3, exponential: 1000 }))
  t.ok(check([-1]))
  t.ok(check('svix'))
})

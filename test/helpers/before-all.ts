/**
 * A test file's shared setup (a redis-server, a database, a receiver) started in tap's `t.before`, so a
 * failure there is a failing test with its error and source, and no test of the file starts until it is done.
 * `stop` runs when the file ends (t.teardown, last registered first), only if the setup finished.
 *
 * `const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())` reads
 * like the top-level `await` it replaces: tests use `redis` as the value. Befores run in the order declared, so
 * one may use an earlier one's value. Reading a value at a file's top level throws, naming the mistake.
 *
 * Use these rather than `t.before` itself: tap 21 drops the error of a `t.before` declared while another runs
 * (the file's tests then run as if it had passed). Here each error is reported, and the steps after it skipped.
 */
import type { Test } from 'tap'

const failed = new WeakSet<object>()

/** Runs `step` in `t.before`; its error fails `t` with its stack and source, and the later steps are skipped. */
export function beforeStep (t: Test, step: () => unknown): void {
  t.before(async () => {
    if (failed.has(t)) return
    try {
      await step()
    } catch (err) {
      failed.add(t)
      t.threw(err)
    }
  })
}

export function beforeAll<T extends object> (t: Test, start: () => Promise<T>, stop?: (value: T) => unknown): T {
  let value: T | undefined
  beforeStep(t, async () => { value = await start() })
  if (stop !== undefined) t.teardown(async () => { if (value !== undefined) await stop(value) })
  const ready = (): T => {
    if (value === undefined) throw new Error('a beforeAll() value was read before its t.before finished (at the top level?) or after it failed (above)')
    return value
  }
  // Every operation goes to the value itself; methods are bound to it, so its private state works as usual.
  return new Proxy({} as T, {
    get: (_, key) => {
      const real = ready()
      const found: unknown = Reflect.get(real, key, real)
      return typeof found === 'function' && key !== 'constructor' ? found.bind(real) : found
    },
    set: (_, key, next) => Reflect.set(ready(), key, next),
    has: (_, key) => Reflect.has(ready(), key),
    ownKeys: () => Reflect.ownKeys(ready()),
    getOwnPropertyDescriptor: (_, key) => Reflect.getOwnPropertyDescriptor(ready(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(ready())
  })
}

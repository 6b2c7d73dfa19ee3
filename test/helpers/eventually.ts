import { setTimeout as sleep } from 'node:timers/promises'

/** How long a wait lasts before it fails: a guard against a hang on a loaded machine, never a timing assertion. */
export const EVENTUALLY_MS = 30_000

/**
 * The suite's one wait on a state: runs `check` every 25 ms until it gives something other than `undefined` or
 * `false` (a row, a count reached, `true`), and returns that; after `ms` it throws, naming `what` it waited for.
 */
export async function eventually<T> (what: string, check: () => T | undefined | false | Promise<T | undefined | false>, ms = EVENTUALLY_MS): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(25)
  }
}

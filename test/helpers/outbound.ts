/** A migrated database and a private Redis for one outbound test file, and outbound services on them. */
import t from 'tap'
import { migrate } from '../../src/db/migrate.js'
import { createOutbound, type Outbound } from '../../src/outbox/outbound.js'
import type { OutboundOptions } from '../../src/outbox/outbound-options.js'
import { TestDatabase } from './pg.js'
import { TestRedis } from './redis.js'

export interface OutboundFixture {
  db: TestDatabase
  redis: TestRedis
  /** A service on the fixture's database and Redis, closed at the end of the file. */
  open (options?: Partial<OutboundOptions>): Outbound
}

export async function outboundFixture (): Promise<OutboundFixture> {
  const [db, redis] = await Promise.all([TestDatabase.create(), TestRedis.start()])
  await migrate(db.url)
  const opened: Outbound[] = []
  t.teardown(async () => {
    await Promise.all(opened.map(async (outbound) => await outbound.close()))
    await Promise.all([db.drop(), redis.stop()])
  })
  return {
    db,
    redis,
    open (options = {}) {
      const outbound = createOutbound({ database: db.url, redis: redis.url, ...options })
      opened.push(outbound)
      return outbound
    }
  }
}

/** Waits for a condition, checking every 20 ms, or fails after `ms`. */
export async function eventually (check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A migrated database and a private Redis for one outbound test file, and outbound services on them. */
import t from 'tap'
import { createOutbound, type Outbound } from '../../src/outbox/outbound.js'
import type { OutboundOptions } from '../../src/outbox/outbound-options.js'
import { TestDatabase } from './pg.js'
import { TestRedis } from './redis.js'
import { beforeAll } from './before-all.js'

export interface OutboundFixture {
  db: TestDatabase
  redis: TestRedis
  /** A service on the fixture's database and Redis, closed at the end of the file. */
  open (options?: Partial<OutboundOptions>): Outbound
}

/** Started in `t.before` (test/helpers/before-all.ts): read `db` and `redis`, and call `open`, inside tests or a `beforeAll`. */
export function outboundFixture (): OutboundFixture {
  const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
  const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
  const opened: Outbound[] = []
  t.teardown(async () => await Promise.all(opened.map(async (outbound) => await outbound.close())))
  return {
    db,
    redis,
    open (options = {}) {
      // A pool of 4 (the default is 10): two files run at once on one PostgreSQL shared by everyone.
      const outbound = createOutbound({ redis: redis.url, ...options, database: options.database ?? db.pool(4) })
      opened.push(outbound)
      return outbound
    }
  }
}


/** A migrated database and a private Redis for one outbound test file, and outbound services on them. */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { createOutbound, type Outbound } from '../../src/outbox/outbound.js'
import type { OutboundOptions } from '../../src/outbox/outbound-options.js'
import type { AnvilLogger } from '../../src/shared/logger.js'
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

export interface AdminDeliveryOptions extends Partial<OutboundOptions> {
  queueName: string
  /** The admin API's token. */
  token: string
  /** The service's and the delivery worker's. */
  logger?: AnvilLogger
}

/**
 * What a file that makes endpoints through the admin API and reads their deliveries at a receiver needs: a
 * service on a queue of its own (dispatch polling every 100 ms), the admin API on it, and a delivery worker on
 * that queue (loopback allowed, no jitter) with the dispatcher started; all stopped at the end of the file.
 * Fastify, the admin plugin and the delivery worker are imported here only, for the files that take them.
 */
export function adminDelivery (fixture: OutboundFixture, { queueName, token, logger, ...options }: AdminDeliveryOptions): { outbound: Outbound, app: FastifyInstance } {
  const logging = logger === undefined ? {} : { logger }
  const outbound = beforeAll(t, async () => fixture.open({ queueName, dispatch: { pollIntervalMs: 100 }, ...logging, ...options }))
  const app = beforeAll(t, async () => {
    const [{ default: Fastify }, { default: anvilAdmin }] = await Promise.all([import('fastify'), import('../../plugins/admin/admin.js')])
    const app = Fastify()
    await app.register(anvilAdmin, { token, outbound })
    return app
  }, async (app) => await app.close())
  beforeAll(t, async () => {
    const [{ createDeliveryWorker }, { outboundInternals }] = await Promise.all([import('../../src/delivery/delivery-worker.js'), import('../../src/outbox/outbound.js')])
    const worker = createDeliveryWorker({ redis: fixture.redis.url, store: outboundInternals(outbound).store, queueName, allowNets: '127.0.0.0/8', jitter: 0, ...logging })
    await Promise.all([worker.start(), outbound.dispatcher.start()])
    return worker
  }, async (worker) => await worker.close())
  return { outbound, app }
}

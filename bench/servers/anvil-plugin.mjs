// Anvil as a plugin in a host app with Fastify's logger off: the plugin's own cost, without the CLI's logging.
// ANVIL_BENCH_WAIT_REPLICAS / ANVIL_BENCH_WAIT_MS turn on the opt-in `replication` (WAIT) option.
import Fastify from 'fastify'
import anvil from '../../dist/index.js'

const replicas = Number(process.env.ANVIL_BENCH_WAIT_REPLICAS ?? 0)
const app = Fastify({ logger: false })
await app.register(anvil, {
  redis: process.env.REDIS_URL,
  secret: process.env.WEBHOOK_SECRET,
  ...(replicas > 0 ? { replication: { replicas, timeoutMs: Number(process.env.ANVIL_BENCH_WAIT_MS ?? 200) } } : {})
})
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
// A clean exit on SIGTERM, so that `node --cpu-prof` writes its profile (bench/profile.mjs --server anvil-plugin).
process.once('SIGTERM', () => app.close().then(() => process.exit(0), () => process.exit(1)))

// Anvil as a plugin in a host app with Fastify's logger off: the plugin's own cost, without the CLI's logging.
import Fastify from 'fastify'
import anvil from '../../dist/index.js'

const app = Fastify({ logger: false })
await app.register(anvil, { redis: process.env.REDIS_URL, secret: process.env.WEBHOOK_SECRET })
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })

// GitHub webhooks into a Fastify service: X-Hub-Signature-256 verified, keyed on X-GitHub-Delivery
// (a redelivery from the GitHub UI makes no second job), handled by the typed router of ./github-handlers.ts.
// Run: REDIS_URL=redis://127.0.0.1:6379 GITHUB_WEBHOOK_SECRET=… node dist/examples/github.js
import Fastify, { type FastifyInstance } from 'fastify'
import { anvil, anvilWorker } from '../index.js'
import type { ExampleOptions } from './stripe.js'
import { createGithubRouter } from './github-handlers.js'

export async function buildGithubService ({ redisUrl, secrets, queueName, onEvent, report }: ExampleOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info' } })
  await app.register(anvil, { redis: redisUrl, queueName, sources: [{ path: '/webhooks/github', provider: 'github', secrets }] })
  const router = createGithubRouter(report ?? ((fields) => app.log.info(fields, 'github')))
  if (onEvent !== undefined) router.onAny(onEvent)
  await app.register(anvilWorker, { redis: redisUrl, queueName, handler: router })
  return app
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const app = await buildGithubService({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    secrets: (process.env.GITHUB_WEBHOOK_SECRET ?? '').split(',').filter(Boolean)
  })
  await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
}

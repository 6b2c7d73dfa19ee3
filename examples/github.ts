// GitHub webhooks into a Fastify service: X-Hub-Signature-256 verified, keyed on X-GitHub-Delivery
// (a redelivery from the GitHub UI makes no second job), handled by X-GitHub-Event.
// Run: REDIS_URL=redis://127.0.0.1:6379 GITHUB_WEBHOOK_SECRET=… node dist/examples/github.js
import Fastify, { type FastifyInstance } from 'fastify'
import { anvil, anvilWorker } from '../index.js'
import type { ExampleOptions } from './stripe.js'

export async function buildGithubService ({ redisUrl, secrets, queueName, onEvent }: ExampleOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info' } })
  await app.register(anvil, { redis: redisUrl, queueName, sources: [{ path: '/webhooks/github', provider: 'github', secrets }] })
  await app.register(anvilWorker, {
    redis: redisUrl,
    queueName,
    handler: async (event) => {
      if (event.eventType === 'pull_request') {
        const { action, number } = event.json<{ action: string, number: number }>()
        app.log.info({ action, number, delivery: event.eventId }, 'pull request')
      }
      await onEvent?.(event)
    }
  })
  return app
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const app = await buildGithubService({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    secrets: (process.env.GITHUB_WEBHOOK_SECRET ?? '').split(',').filter(Boolean)
  })
  await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
}

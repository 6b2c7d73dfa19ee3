// The soak's worker handler: fails 5 % of attempts at random, always fails events marked `fail`,
// and records every completion in a Redis set so the soak can count unique completions.
import { Redis } from 'ioredis'

const redis = new Redis(process.env.REDIS_URL)
const FLAKY = 0.05

export default async function handler (event) {
  const body = event.json()
  if (body.fail === true) throw new Error('this event always fails')
  if (Math.random() < FLAKY) throw new Error('flaky downstream')
  await redis.sadd('soak:completed', event.eventId ?? event.id)
}

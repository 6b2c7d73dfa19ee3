import { within } from '../time/within.js'
import type { RedisClient } from './connect.js'

/** Rejects when Redis has not answered within `ms`. */
export async function redisWithin<T> (promise: Promise<T>, ms: number): Promise<T> {
  return await within(promise, ms, (): never => { throw new Error(`Redis did not answer within ${ms} ms`) })
}

/** True when Redis answers a PING within `ms`; false on any failure or silence. */
export async function pingWithin (client: RedisClient, ms: number): Promise<boolean> {
  try {
    return await redisWithin(client.ping(), ms) === 'PONG'
  } catch {
    return false
  }
}

import { DEFAULT_PREFIX } from '../shared/constants.js'
import { errors } from '../shared/errors.js'
import { checkClusterPrefix, type RedisInput } from './connect.js'

/**
 * The opening of every Redis-backed component: its options checked (a problem throws INVALID_OPTIONS), then
 * its key prefix, defaulted and, on a cluster, required to carry a hash tag.
 */
export function checkedPrefix<T extends { redis: RedisInput, prefix?: string }> (options: T, check: (options: T) => string | undefined): string {
  const problem = check(options)
  if (problem !== undefined) throw new errors.INVALID_OPTIONS(problem)
  const prefix = options.prefix ?? DEFAULT_PREFIX
  checkClusterPrefix(options.redis, prefix)
  return prefix
}

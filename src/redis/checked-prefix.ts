import { DEFAULT_PREFIX } from '../shared/constants.js'
import { checkClusterPrefix, type RedisInput } from './connect.js'
import { throwInvalid } from '../shared/validate.js'

/**
 * The opening of every Redis-backed component: its options checked (a problem throws INVALID_OPTIONS), then
 * its key prefix, defaulted and, on a cluster, required to carry a hash tag.
 */
export function checkedPrefix<T extends { redis: RedisInput, prefix?: string }> (options: T, check: (options: T) => string | undefined): string {
  throwInvalid(check(options))
  const prefix = options.prefix ?? DEFAULT_PREFIX
  checkClusterPrefix(options.redis, prefix)
  return prefix
}

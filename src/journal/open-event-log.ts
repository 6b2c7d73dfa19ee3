import { errors } from '../shared/errors.js'
import { compileCheck } from '../shared/validate.js'
import { checkClusterPrefix } from '../redis/connect.js'
import { DEFAULT_PREFIX } from '../shared/constants.js'
import { EventLogOptionsSchema, type EventLog, type EventLogOptions } from './event-log.js'
import { pgEventLog } from './pg-event-log.js'
import { redisEventLog } from './redis-event-log.js'

const checkOptions = compileCheck(EventLogOptionsSchema)

/** The journal when a database is given, else the dead letters in Redis. */
export function openEventLog (options: EventLogOptions): EventLog {
  const problem = checkOptions(options)
  if (problem !== undefined) throw new errors.INVALID_OPTIONS(problem)
  checkClusterPrefix(options.redis, options.prefix ?? DEFAULT_PREFIX)
  const { database } = options
  return database === undefined ? redisEventLog(options) : pgEventLog({ ...options, database })
}

import { compileCheck } from '../shared/validate.js'
import { checkedPrefix } from '../redis/checked-prefix.js'
import { EventLogOptionsSchema, type EventLog, type EventLogOptions } from './event-log.js'
import { pgEventLog } from './pg-event-log.js'
import { redisEventLog } from './redis-event-log.js'

const checkOptions = compileCheck(EventLogOptionsSchema)

/** The journal when a database is given, else the dead letters in Redis. */
export function openEventLog (options: EventLogOptions): EventLog {
  checkedPrefix(options, checkOptions)
  const { database } = options
  return database === undefined ? redisEventLog(options) : pgEventLog({ ...options, database })
}

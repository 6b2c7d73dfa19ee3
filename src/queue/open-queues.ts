import { Queue } from 'bullmq'
import { connect, disconnect, type ConnectionRole, type OwnedConnection, type RedisInput } from '../redis/connect.js'
import { DEAD_LETTER_SUFFIX } from '../shared/constants.js'

/** One name, used by the worker that writes dead letters and by replay that reads them. */
export function deadLetterQueueName (queueName: string): string {
  return queueName + DEAD_LETTER_SUFFIX
}

export interface QueuePair<M, D> {
  connection: OwnedConnection
  main: Queue<M>
  dead: Queue<D>
  /** Closes both queues, then the connection when it was opened here. */
  close (): Promise<void>
}

/** A queue and its dead letters on one connection, as the worker, replay and the sampler each need them. */
export function openQueues<M = unknown, D = unknown> (
  redis: RedisInput, role: ConnectionRole, names: { queueName: string, prefix: string }, onError: (err: Error) => void = () => {}
): QueuePair<M, D> {
  const connection = connect(redis, role, onError)
  const { queueName, prefix } = names
  const main = new Queue<M>(queueName, { connection: connection.client, prefix })
  const dead = new Queue<D>(deadLetterQueueName(queueName), { connection: connection.client, prefix })
  main.on('error', onError)
  dead.on('error', onError)
  return {
    connection,
    main,
    dead,
    async close () {
      await main.close()
      await dead.close()
      await disconnect(connection)
    }
  }
}

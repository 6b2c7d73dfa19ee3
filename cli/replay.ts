import type { ReplayConfig } from './config/load-database-config.js'
import { DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import { createReplayer, type ReplayResult } from '../src/worker/replay.js'

export type ReplayTarget = { id: string } | { all: true }

/** `anvil replay <id>` / `anvil replay --all [--limit N]`: one JSON line per replayed dead letter on stdout. */
export async function replay (config: ReplayConfig, target: ReplayTarget): Promise<void> {
  const replayer = createReplayer({
    redis: config.redisUrl ?? DEFAULT_REDIS_URL,
    queueName: config.queueName,
    prefix: config.prefix
  })
  try {
    const results: ReplayResult[] = 'id' in target
      ? [await replayer.replayDeadLetter(target.id)]
      : await replayer.replayDeadLetters({ limit: config.limit })
    for (const result of results) process.stdout.write(JSON.stringify(result) + '\n')
  } finally {
    await replayer.close()
  }
}

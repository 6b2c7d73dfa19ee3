/** `@anvil/fastify/replay`: dead letters back onto the queue, with no worker (docs/api.md lists what it exports). */
export { createReplayer, replayDeadLetter, replayDeadLetters } from '../src/worker/replay.js'
export type { BulkReplayOptions, DeadLetter, Replayer, ReplayOptions, ReplayResult } from '../src/worker/replay.js'

import type { AnvilLogger } from '../shared/logger.js'

/**
 * A handler may hold this method (the router does): the worker calls it when it starts, with its logger, so
 * the handler can refuse changes from then on. Plain function handlers have none and are untouched.
 */
export const HANDLER_START = Symbol.for('@anvil/fastify.handlerStart')

export interface StartableHandler {
  [HANDLER_START]?: (context: { logger: AnvilLogger }) => void
}

export function startHandler (handler: unknown, logger: AnvilLogger): void {
  (handler as StartableHandler)[HANDLER_START]?.({ logger })
}

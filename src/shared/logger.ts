/** The subset of a logger Anvil calls; pino and Fastify's logger fit. */
export interface AnvilLogger {
  /** Optional, for loggers written before it was used: the worker's per-job start line. */
  debug? (obj: object, msg?: string): void
  info (obj: object, msg?: string): void
  warn (obj: object, msg?: string): void
  error (obj: object, msg?: string): void
  /** Optional (pino and Fastify's logger have it): the failed-attempt line carries the error's stack when debug is on. */
  isLevelEnabled? (level: string): boolean
}

/** The logger of a part given none: its lines go nowhere. */
export const silentLogger: AnvilLogger = { info () {}, warn () {}, error () {} }

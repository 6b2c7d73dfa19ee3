import { pino, type DestinationStream, type Logger } from 'pino'
import type { LogLevel } from '../src/config.js'

/**
 * Never logged: the secret (should anything ever log an options object) and the headers that carry
 * signatures or credentials. Fastify's request serializer logs no headers today; this keeps it so.
 */
export const REDACT_PATHS = [
  'secret', 'secrets', '*.secret', '*.secrets',
  'req.headers["x-signature"]', 'req.headers.authorization', 'req.headers.cookie',
  'headers["x-signature"]', 'headers.authorization', 'headers.cookie'
]
export const REDACTED = '[redacted]'

/** One pino logger (JSON lines on stdout) per process, shared by Fastify, the worker and the CLI itself. */
export function createLogger (level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: REDACTED } }
  return destination === undefined ? pino(options) : pino(options, destination)
}

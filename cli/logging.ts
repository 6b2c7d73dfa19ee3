import { pino, type DestinationStream, type Logger } from 'pino'
import type { LogLevel } from './config/load-config.js'
import { SIGNATURE_HEADERS } from '../src/providers/presets.js'

/**
 * Never logged: the secret (should anything ever log an options object) and the headers that carry
 * signatures or credentials. Fastify's request serializer logs no headers today; this keeps it so.
 */
export const REDACT_PATHS = [
  'secret', 'secrets', '*.secret', '*.secrets', 'signature', '*.signature',
  // Sources (from options or a sources file) hold secrets: never logged, wherever they sit.
  'sources[*].secrets', '*.sources[*].secrets',
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
  // Every provider preset's signature (or token) header.
  ...SIGNATURE_HEADERS.flatMap((name) => [`req.headers["${name}"]`, `headers["${name}"]`])
]
/** Webhook bodies may hold personal data: redacted unless ANVIL_LOG_PAYLOADS=true. */
export const PAYLOAD_PATHS = ['payload', '*.payload', 'body', '*.body']
export const REDACTED = '[redacted]'

export interface LoggerOptions {
  destination?: DestinationStream
  logPayloads?: boolean
}

/**
 * Log lines for a person at a terminal (`anvil dev` on a TTY): pino-pretty, written synchronously so they
 * stay in order with what the CLI prints itself. Loaded only then: production processes log JSON.
 */
export async function prettyDestination (): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty')
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true })
}

/** One pino logger (JSON lines on stdout) per process, shared by Fastify, the worker and the CLI itself. */
export function createLogger (level: LogLevel, options: LoggerOptions | DestinationStream = {}): Logger {
  const { destination, logPayloads = false } = 'write' in options ? { destination: options } : options
  const paths = logPayloads ? REDACT_PATHS : [...REDACT_PATHS, ...PAYLOAD_PATHS]
  const pinoOptions = { level, redact: { paths, censor: REDACTED } }
  return destination === undefined ? pino(pinoOptions) : pino(pinoOptions, destination)
}

export { REPEAT_WINDOW_MS, throttleRepeats, type WarnLogger } from '../src/shared/throttle-repeats.js'

import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino'

type LevelName = Level

/**
 * A request's logger that becomes a pino child only when it writes a line. Fastify makes a child per
 * request, and pino serialises and redacts its bindings (the request id) on the spot: a measurable share
 * of a webhook's CPU (bench/README.md), spent for nothing when the level lets no request line through.
 */
class DeferredChild {
  private made: Logger | undefined
  private readonly threshold: number

  constructor (private readonly parent: Logger, private readonly bindings: Bindings, private readonly options: ChildLoggerOptions) {
    this.threshold = parent.levels.values[options.level ?? parent.level] ?? parent.levelVal
  }

  get level (): string {
    return this.options.level ?? this.parent.level
  }

  private get logger (): Logger {
    this.made ??= this.parent.child(this.bindings, this.options)
    return this.made
  }

  private write (level: LevelName, args: unknown[]): void {
    if ((this.parent.levels.values[level] ?? 0) < this.threshold) return
    const logger = this.logger as unknown as Record<LevelName, (...line: unknown[]) => void>
    logger[level](...args)
  }

  isLevelEnabled (level: string): boolean {
    return (this.parent.levels.values[level] ?? Infinity) >= this.threshold
  }

  fatal (...args: unknown[]): void { this.write('fatal', args) }
  error (...args: unknown[]): void { this.write('error', args) }
  warn (...args: unknown[]): void { this.write('warn', args) }
  info (...args: unknown[]): void { this.write('info', args) }
  debug (...args: unknown[]): void { this.write('debug', args) }
  trace (...args: unknown[]): void { this.write('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.logger.child(bindings, options)
  }
}

/** Fastify's `childLoggerFactory`: request loggers that cost nothing until they write. */
export function deferredChildLogger (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new DeferredChild(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger
}

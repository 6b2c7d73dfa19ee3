import closeWithGrace from 'close-with-grace'
import type { Logger } from 'pino'

/** Time on top of the worker's own shutdown timeout before close-with-grace gives up and exits 1. */
export const SHUTDOWN_MARGIN_MS = 5000

/**
 * What a command started, closed in reverse order on SIGTERM/SIGINT (then exit 0), on a crash (exit 1),
 * or when startup fails half-way, so nothing (a listening socket, a private redis-server) is left behind.
 */
export class Lifecycle {
  private readonly closers: Array<{ name: string, close: () => Promise<void> }> = []
  private readonly log: Logger

  constructor (log: Logger) {
    this.log = log
  }

  add (name: string, close: () => Promise<void>): void {
    this.closers.push({ name, close })
  }

  async close (): Promise<void> {
    for (let closer = this.closers.pop(); closer !== undefined; closer = this.closers.pop()) {
      try {
        this.log.debug({ closing: closer.name }, 'anvil: closing')
        await closer.close()
        this.log.debug({ closed: closer.name }, 'anvil: closed')
      } catch (err) {
        this.log.error({ err: (err as Error).message, closing: closer.name }, 'anvil: close failed')
      }
    }
  }

  /** `graceMs`: how long closing may legitimately take (the worker's shutdown timeout). */
  closeOnSignals (graceMs: number): void {
    const log = this.log
    closeWithGrace({
      delay: graceMs + SHUTDOWN_MARGIN_MS,
      logger: { error: (message: unknown) => log.error({ reason: String(message) }, 'anvil: shutdown') }
    }, async ({ signal, err }) => {
      if (err !== undefined) log.error({ err }, 'anvil: crashed, shutting down')
      else log.info({ signal }, 'anvil: shutting down')
      await this.close()
      log.info('anvil: stopped')
    })
  }
}

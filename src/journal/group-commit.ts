/**
 * Group commit (`journal.groupCommit`): the handlers of several events run one after another on one client,
 * in one transaction, each in a savepoint of its own; one commit carries them all. A handler that throws rolls
 * back to its savepoint alone. A group commits when it has `maxEvents`, `maxWaitMs` after it opened, or at
 * once when no other event is on its way to it (every job running is in it: none can come before it commits).
 */
import type pg from 'pg'
import type { TransactionHost } from './effect-scope.js'
import type { GroupCommitOptions } from './journal-options.js'

/** An event on its way to a group (its row being written): the open group waits for it. */
export interface GroupTicket {
  /** The event will not join (the handler does not run). */
  leave: () => void
}

interface Group {
  client?: Promise<pg.PoolClient>
  begun: boolean
  members: number
  /** Members whose handler has not finished. */
  running: number
  /** The members' turns, one after another. */
  chain: Promise<unknown>
  closed: boolean
  timer?: NodeJS.Timeout
  /** A member's client broke (an undo failed): the group rolls back. */
  broken?: Error
  committed: Promise<void>
  settle: (err?: unknown) => void
}

/** The savepoint each member runs in; members run one at a time, so one name serves them all. */
const SAVEPOINT = 'anvil_event'

export class GroupCommitter {
  private open: Group | undefined
  /** Events entered and not yet joined or gone. */
  private coming = 0

  constructor (private readonly pool: pg.Pool, private readonly options: GroupCommitOptions) {}

  enter (): GroupTicket {
    this.coming++
    let left = false
    return {
      leave: () => {
        if (left) return
        left = true
        this.coming--
        this.closeIfIdle()
      }
    }
  }

  /**
   * Runs `work` in the open group, after its earlier members, in a savepoint on the group's client; resolves
   * with its result once the group has committed. A member that throws does not wait for the commit.
   */
  async run<T> (ticket: GroupTicket, work: (host: TransactionHost) => Promise<T>): Promise<T> {
    const group = this.open ?? this.start()
    group.members++
    group.running++
    const turn = group.chain.then(async () => await work(this.host(group)))
    group.chain = turn.catch(() => {})
    // After its turn is on the chain: the commit waits for the chain as it is when the group closes.
    ticket.leave()
    if (group.members >= this.options.maxEvents) this.close(group)
    let result: T
    try {
      result = await turn
    } finally {
      group.running--
      this.closeIfIdle()
    }
    await group.committed
    return result
  }

  private start (): Group {
    let settle!: (err?: unknown) => void
    const committed = new Promise<void>((resolve, reject) => { settle = (err) => err === undefined ? resolve() : reject(err) })
    // Members that fail never wait for it: an unawaited rejection must not surface.
    committed.catch(() => {})
    const group: Group = { begun: false, members: 0, running: 0, chain: Promise.resolve(), closed: false, committed, settle }
    group.timer = setTimeout(() => this.close(group), this.options.maxWaitMs)
    this.open = group
    return group
  }

  private host (group: Group): TransactionHost {
    return {
      open: async () => {
        group.client ??= this.pool.connect()
        const begin = group.begun ? `SAVEPOINT ${SAVEPOINT}` : `BEGIN; SAVEPOINT ${SAVEPOINT}`
        group.begun = true
        return { client: await group.client, begin }
      },
      end: `RELEASE SAVEPOINT ${SAVEPOINT}`,
      undo: `ROLLBACK TO SAVEPOINT ${SAVEPOINT}; RELEASE SAVEPOINT ${SAVEPOINT}`,
      release: (err) => { group.broken ??= err },
      always: true
    }
  }

  private closeIfIdle (): void {
    const group = this.open
    if (group !== undefined && group.running === 0 && this.coming === 0) this.close(group)
  }

  private close (group: Group): void {
    if (group.closed) return
    group.closed = true
    clearTimeout(group.timer)
    if (this.open === group) this.open = undefined
    void group.chain.then(async () => await this.commit(group))
  }

  private async commit (group: Group): Promise<void> {
    if (group.client === undefined) return group.settle()
    const client = await group.client.catch((err: unknown) => { group.settle(err) })
    if (client === undefined) return
    try {
      if (group.broken !== undefined) throw group.broken
      // In a transaction PostgreSQL has aborted, COMMIT answers ROLLBACK rather than an error.
      const { command } = await client.query('COMMIT')
      if (command !== 'COMMIT') throw new Error('anvil journal: the group\'s transaction was rolled back')
      client.release()
      group.settle()
    } catch (err) {
      client.release(await client.query('ROLLBACK').then(() => err as Error, () => err as Error))
      group.settle(err)
    }
  }
}

/**
 * Group commit (`journal.groupCommit`): the events of a group commit together, once. An event whose handler
 * began no transaction (it used `once`, or nothing) hands its row and its effects to the group: one statement
 * writes them all, in one round trip with the COMMIT. A handler that writes through `event.db` runs on the
 * group's client in a savepoint of its own, one after another, its row written in it; a handler that throws
 * rolls back to its savepoint alone. When the group's statement is refused (a row another job holds, an effect
 * another run recorded first), the group writes its events one at a time, each in a savepoint, so a failing
 * member never takes the others down. A group commits when it has `maxEvents`, `maxWaitMs` after it opened, or
 * at once when no other event is on its way to it (every job running is in it: none can come before it commits).
 */
import type pg from 'pg'
import type { Database } from '../db/database.js'
import { errors } from '../shared/errors.js'
import { claimAll, prepared, recordChecked, recordGroup, recordValues, REFUSED, type EffectRow, type OutcomeRow } from '../sql/webhook-event-outcome.js'
import type { CommitOutcome, LaterOutcome, TransactionHost } from './effect-scope.js'
import type { GroupCommitOptions } from './journal-options.js'

/** An event on its way to a group (it may yet be refused before its handler runs): the open group waits for it. */
export interface GroupTicket {
  /** The event will not join (the handler does not run). */
  leave: () => void
}

/** An event whose row (and effects) the group's statement writes. */
interface Handed {
  row: OutcomeRow
  effects: EffectRow[]
  outcome?: PromiseSettledResult<CommitOutcome>
  settle: (outcome: PromiseSettledResult<CommitOutcome>) => void
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
  handed: Handed[]
  committed: Promise<void>
  settle: (err?: unknown) => void
}

/** The savepoint each member runs in; members run one at a time, so one name serves them all. */
const SAVEPOINT = 'anvil_event'
/** The savepoint around the group's statement, and around each event written alone after it was refused. */
const ROWS = 'anvil_rows'

const isLater = (outcome: CommitOutcome | LaterOutcome): outcome is LaterOutcome => typeof outcome === 'object'

export class GroupCommitter {
  private open: Group | undefined
  /** Events entered and not yet joined or gone. */
  private coming = 0

  /** `queued`: the journal's PostgreSQL queue; the group's statement deletes the queue rows of the events it writes. */
  constructor (private readonly db: Database, private readonly options: GroupCommitOptions, private readonly queued = false) {}

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
   * Runs `work` in the open group, after its earlier members; resolves with its outcome once the group has
   * committed. A member that throws does not wait for the commit.
   */
  async run (ticket: GroupTicket, work: (host: TransactionHost) => Promise<CommitOutcome | LaterOutcome>): Promise<CommitOutcome> {
    const group = this.open ?? this.start()
    group.members++
    group.running++
    const turn = group.chain.then(async () => await work(this.host(group)))
    group.chain = turn.catch(() => {})
    // After its turn is on the chain: the commit waits for the chain as it is when the group closes.
    ticket.leave()
    if (group.members >= this.options.maxEvents) this.close(group)
    let result: CommitOutcome | LaterOutcome
    try {
      result = await turn
    } finally {
      group.running--
      this.closeIfIdle()
    }
    await group.committed
    return isLater(result) ? await result.later : result
  }

  private start (): Group {
    let settle!: (err?: unknown) => void
    const committed = new Promise<void>((resolve, reject) => { settle = (err) => err === undefined ? resolve() : reject(err) })
    // Members that fail never wait for it: an unawaited rejection must not surface.
    committed.catch(() => {})
    const group: Group = { begun: false, members: 0, running: 0, chain: Promise.resolve(), closed: false, handed: [], committed, settle }
    group.timer = setTimeout(() => this.close(group), this.options.maxWaitMs)
    this.open = group
    return group
  }

  private host (group: Group): TransactionHost {
    return {
      open: async () => {
        group.client ??= this.db.pool.connect()
        const begin = group.begun ? `SAVEPOINT ${SAVEPOINT}` : `BEGIN; SAVEPOINT ${SAVEPOINT}`
        group.begun = true
        return { client: await group.client, begin }
      },
      end: `RELEASE SAVEPOINT ${SAVEPOINT}`,
      undo: `ROLLBACK TO SAVEPOINT ${SAVEPOINT}; RELEASE SAVEPOINT ${SAVEPOINT}`,
      release: (err) => { group.broken ??= err },
      always: true,
      defer: async (row, effects) => await new Promise<CommitOutcome>((resolve, reject) => {
        group.handed.push({ row, effects, settle: (outcome) => outcome.status === 'fulfilled' ? resolve(outcome.value) : reject(outcome.reason) })
      })
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

  /** The handed events written one at a time, each in a savepoint: a refused row is `refused`, a taken effect fails its event. */
  private async alone (client: pg.PoolClient, handed: Handed): Promise<void> {
    await client.query(`SAVEPOINT ${ROWS}`)
    try {
      if (handed.effects.length > 0 && (await client.query(claimAll(this.db.schema, handed.effects))).rowCount !== handed.effects.length) {
        throw new errors.ONCE_TAKEN(handed.row.id)
      }
      await client.query({ name: prepared('record_one', this.db.schema, this.queued), text: recordChecked(this.db.schema, this.queued), values: recordValues([handed.row]) })
      await client.query(`RELEASE SAVEPOINT ${ROWS}`)
      handed.outcome = { status: 'fulfilled', value: 'committed' }
    } catch (err) {
      await client.query(`ROLLBACK TO SAVEPOINT ${ROWS}; RELEASE SAVEPOINT ${ROWS}`)
      handed.outcome = (err as { code?: string }).code === REFUSED ? { status: 'fulfilled', value: 'refused' } : { status: 'rejected', reason: err }
    }
  }

  private async commit (group: Group): Promise<void> {
    const { handed } = group
    if (group.client === undefined && handed.length === 0) return group.settle()
    const client = await (group.client ??= this.db.pool.connect()).catch((err: unknown) => {
      for (const h of handed) h.settle({ status: 'rejected', reason: err })
      group.settle(err)
    })
    if (client === undefined) return
    try {
      if (group.broken !== undefined) throw group.broken
      const begin = group.begun ? [] : ['BEGIN']
      group.begun = true
      let command: string | undefined
      if (handed.length === 0) {
        command = (await client.query([...begin, 'COMMIT'].join('; ')) as unknown as pg.QueryResult).command
      } else {
        // The group's one round trip: its rows and effects, and the commit. Refused, it stops before the COMMIT.
        const statement = recordGroup(this.db.schema, handed.map((h) => h.row), handed.flatMap((h) => h.effects), this.queued)
        try {
          const results = await client.query([...begin, `SAVEPOINT ${ROWS}`, statement, `RELEASE SAVEPOINT ${ROWS}`, 'COMMIT'].join('; ')) as unknown as pg.QueryResult[]
          command = results.at(-1)?.command
          for (const h of handed) h.outcome = { status: 'fulfilled', value: 'committed' }
        } catch {
          await client.query(`ROLLBACK TO SAVEPOINT ${ROWS}; RELEASE SAVEPOINT ${ROWS}`)
          for (const h of handed) await this.alone(client, h)
          command = (await client.query('COMMIT')).command
        }
      }
      // In a transaction PostgreSQL has aborted, COMMIT answers ROLLBACK rather than an error.
      if (command !== 'COMMIT') throw new Error('anvil journal: the group\'s transaction was rolled back')
      client.release()
      for (const h of handed) h.settle(h.outcome ?? { status: 'rejected', reason: new Error('anvil journal: no outcome') })
      group.settle()
    } catch (err) {
      client.release(await client.query('ROLLBACK').then(() => err as Error, () => err as Error))
      for (const h of handed) h.settle({ status: 'rejected', reason: err })
      group.settle(err)
    }
  }
}

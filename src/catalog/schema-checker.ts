/**
 * Checks data against the catalog's JSON Schemas on a worker thread (schema-worker.ts), so that no schema and no
 * data, however costly to check, holds the event loop: the loop only posts JSON text and reads the answer. A task
 * the worker has not finished `timeoutMs` after it reached it is refused as SCHEMA_TOO_SLOW; the worker is then
 * ended (which stops the runaway check) and a fresh one takes the tasks that waited behind it.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { errors } from '../shared/errors.js'
import type { SchemaAnswer, SchemaTask } from './schema-task.js'

/** How long one check or compile may run on the worker. */
export const DEFAULT_SCHEMA_CHECK_TIMEOUT_MS = 1000
/** Distinct schema texts one worker keeps compiled; past it a fresh worker starts, so schemas changed often leak nothing. */
const MAX_SCHEMAS = 1000
/** The worker's heap: a check that needs more is refused as one that ran too long. */
const WORKER_HEAP_MB = 256

export interface SchemaVerdict {
  /** Why the schema does not compile. */
  invalid?: string
  /** Where the data breaks the schema. */
  problem?: string
}

export interface SchemaChecker {
  /** Compiles `schema` (JSON text), or checks `data` (JSON text) against it; `label` names it in a refusal. */
  run (label: string, schema: string, data?: string): Promise<SchemaVerdict>
  close (): Promise<void>
}

interface Pending { task: SchemaTask, schema: string, label: string, resolve: (verdict: SchemaVerdict) => void, reject: (err: Error) => void }

/**
 * The compiled worker beside this file, with none of the process's flags (a test runner's `--import` has no
 * business in it); run from the TypeScript sources (tap on a `.ts` test), its `.ts` twin, loaded through tsx.
 */
function newWorker (): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB }
  const compiled = new URL('./schema-worker.js', import.meta.url)
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, { execArgv: [], resourceLimits })
  /* c8 ignore next 3 -- only from the sources, with the dev dependencies */
  const source = new URL('./schema-worker.ts', import.meta.url).href
  const boot = `import(${JSON.stringify('tsx/esm/api')}).then(({ register }) => { register(); return import(${JSON.stringify(source)}) })`
  return new Worker(boot, { eval: true, execArgv: [], resourceLimits })
}

/** One worker thread and what it was sent, in the order it answers. */
interface Thread { worker: Worker, ready: boolean, known: Set<number>, pending: Pending[] }

export function createSchemaChecker ({ timeoutMs = DEFAULT_SCHEMA_CHECK_TIMEOUT_MS }: { timeoutMs?: number } = {}): SchemaChecker {
  /** Schema text → its number. */
  const keys = new Map<string, number>()
  /** Set when the numbering restarted: the worker, which keeps every schema it compiled, is replaced once idle. */
  let recycle = false
  let thread: Thread | undefined
  let watchdog: NodeJS.Timeout | undefined
  let taskIds = 0
  let keyCount = 0
  let closed = false

  function start (): Thread {
    const started: Thread = { worker: newWorker(), ready: false, known: new Set(), pending: [] }
    started.worker.on('message', (answer: SchemaAnswer | 'ready') => {
      if (started !== thread) return
      if (answer === 'ready') started.ready = true
      else {
        const head = started.pending.shift()
        /* c8 ignore next -- answers come one per task, in order */
        if (head === undefined || head.task.id !== answer.id) return
        if (answer.invalid === undefined) started.known.add(head.task.key)
        head.resolve(answer)
      }
      arm()
    })
    // Out of memory, or a crash: the task it was on is refused as one that ran too long, the rest go on.
    started.worker.on('error', () => { if (started === thread) cut() })
    started.worker.on('exit', () => { if (started === thread) cut() })
    return started
  }

  /** Gives the head task `timeoutMs` from now (from when the worker is up); the worker holds the process open only while it has work. */
  function arm (): void {
    clearTimeout(watchdog)
    watchdog = undefined
    if (thread === undefined) return
    if (thread.pending.length === 0) {
      if (recycle) {
        recycle = false
        stop()
      } else thread.worker.unref()
      return
    }
    thread.worker.ref()
    if (thread.ready) watchdog = setTimeout(cut, timeoutMs)
  }

  /** Ends the worker: the task it was on is refused (unless the checker closed), what waited behind goes to a fresh one. */
  function stop (): Pending[] {
    const old = thread
    thread = undefined
    clearTimeout(watchdog)
    if (old === undefined) return []
    void old.worker.terminate()
    return old.pending
  }

  function cut (): void {
    const [head, ...waiting] = stop()
    head?.reject(new errors.SCHEMA_TOO_SLOW(head.label, timeoutMs))
    for (const item of waiting) send(item)
  }

  function send (item: Pending): void {
    thread ??= start()
    thread.pending.push(item)
    thread.worker.postMessage(thread.known.has(item.task.key) ? item.task : { ...item.task, schema: item.schema })
    if (thread.pending.length === 1) arm()
  }

  function keyOf (schema: string): number {
    let key = keys.get(schema)
    if (key !== undefined) return key
    if (keys.size >= MAX_SCHEMAS) {
      keys.clear()
      recycle = true
    }
    key = ++keyCount
    keys.set(schema, key)
    return key
  }

  return {
    async run (label, schema, data) {
      if (closed) throw new Error('the event-type catalog is closed')
      const key = keyOf(schema)
      return await new Promise<SchemaVerdict>((resolve, reject) => {
        send({ task: { id: taskIds++, key, ...(data === undefined ? {} : { data }) }, schema, label, resolve, reject })
      })
    },
    async close () {
      closed = true
      const old = thread
      for (const item of stop()) item.reject(new Error('the event-type catalog is closed'))
      await old?.worker.terminate()
    }
  }
}

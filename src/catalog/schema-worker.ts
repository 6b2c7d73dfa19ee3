/**
 * The catalog's worker thread (src/catalog/schema-checker.ts): compiles each schema in an Ajv of its own and
 * checks data against it, one task at a time, in order. It runs beside the event loop, so a schema and data that
 * take long to check (a `uniqueItems` over large arrays, an `anyOf` that recurses) cost this thread's time, which
 * the checker cuts, never the server's.
 */
import { parentPort } from 'node:worker_threads'
import type { ValidateFunction } from 'ajv'
import { catalogAjv, describeError } from './catalog-ajv.js'
import type { SchemaAnswer, SchemaTask } from './schema-task.js'

const compiled = new Map<number, ValidateFunction>()

function answer (task: SchemaTask): SchemaAnswer {
  let validate = compiled.get(task.key)
  if (validate === undefined) {
    /* c8 ignore next -- the checker sends the schema until it learns the key compiled */
    if (task.schema === undefined) return { id: task.id, invalid: 'schema not compiled' }
    try {
      validate = catalogAjv().compile(JSON.parse(task.schema) as object)
    } catch (err) {
      return { id: task.id, invalid: (err as Error).message }
    }
    compiled.set(task.key, validate)
  }
  if (task.data === undefined || validate(JSON.parse(task.data))) return { id: task.id }
  const first = validate.errors?.[0]
  return { id: task.id, problem: first === undefined ? 'data does not fit its type\'s schema' : describeError(first) }
}

parentPort?.on('message', (task: SchemaTask) => { parentPort?.postMessage(answer(task)) })
// Loaded (Ajv, the formats, RE2's WASM): the checker's clock for the first task starts now.
parentPort?.postMessage('ready')

/** What the checker (src/catalog/schema-checker.ts) and its worker (schema-worker.ts) pass each other. */
export interface SchemaTask {
  id: number
  /** The schema's number for this worker; the text comes along until the worker has compiled it. */
  key: number
  /** The schema as JSON text. */
  schema?: string
  /** The data as JSON text; without it, the task only compiles the schema. */
  data?: string
}

export interface SchemaAnswer {
  id: number
  /** Why the schema does not compile (ajv's words, or RE2's for a pattern it cannot run). */
  invalid?: string
  /** Where the data breaks the schema (`data/amount: must be integer`); absent when it fits. */
  problem?: string
}

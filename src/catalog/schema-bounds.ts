import { errors } from '../shared/errors.js'

/** The largest schema `PUT /admin/event-types/:name` takes, as JSON bytes. */
export const DEFAULT_MAX_SCHEMA_BYTES = 128 * 1024
/** The deepest nesting of objects and arrays in it (each `properties` level is two). */
export const DEFAULT_MAX_SCHEMA_DEPTH = 64

/** Deeper than `max`, walked without recursion (a deep schema would otherwise overflow this check's stack). */
function deeperThan (value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item
    if (typeof node !== 'object' || node === null) continue
    if (depth >= max) return true
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return false
}

/** A schema's JSON text once it fits the bounds; else SCHEMA_TOO_LARGE naming the bound and the option that raises it. */
export function schemaBounds (maxBytes: number, maxDepth: number) {
  return (name: string, schema: unknown): string => {
    const text = JSON.stringify(schema)
    const bytes = Buffer.byteLength(text)
    if (bytes > maxBytes) throw new errors.SCHEMA_TOO_LARGE(name, `${bytes} bytes of JSON, over the ${maxBytes}-byte limit (maxSchemaBytes)`)
    if (deeperThan(schema, maxDepth)) throw new errors.SCHEMA_TOO_LARGE(name, `nested deeper than ${maxDepth} objects and arrays (maxSchemaDepth)`)
    return text
  }
}

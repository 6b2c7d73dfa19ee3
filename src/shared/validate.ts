import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'

/**
 * Compiles a TypeBox schema into a check that returns the first problem as one line,
 * e.g. `bodyLimit: Expected integer`, or undefined when the value fits. A schema with an `errorMessage`
 * keyword words its own problem: `connectTimeoutMs must be a whole number >= 0`.
 */
export function compileCheck<T extends TSchema> (schema: T): (value: unknown) => string | undefined {
  const compiled = TypeCompiler.Compile(schema)
  return (value) => {
    if (compiled.Check(value)) return undefined
    const first = compiled.Errors(value).First()
    /* c8 ignore next -- Check failed, so there is an error */
    if (first === undefined) return 'invalid'
    const where = first.path === '' ? 'value' : first.path.slice(1).replaceAll('/', '.')
    const own = (first.schema as { errorMessage?: unknown }).errorMessage
    return typeof own === 'string' ? `${where} ${own}` : `${where}: ${first.message}`
  }
}

/** True when `value` is an object with a function under each name (own or inherited, as pino's methods are). */
export function hasMethods (value: unknown, names: readonly string[]): boolean {
  return typeof value === 'object' && value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
}

export type { Static }

import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { closestName } from './closest-name.js'
import { errors } from './errors.js'

/**
 * Compiles a TypeBox schema into a check that returns the first problem as one line (`bodyLimit: Expected
 * integer`), or undefined. It never quotes the value (it may be a secret), and says more where TypeBox says
 * little: a schema's own `errorMessage`, the names of a choice, the known key a misspelt one meant.
 */
export function compileCheck<T extends TSchema> (schema: T): (value: unknown) => string | undefined {
  // Compiled on first use: modules and the CLI's settings table make their checks when loaded, and a process
  // runs few of them (compiling them all cost an `anvil` command about 0.1 s of CPU before it did anything).
  let compiled: ReturnType<typeof TypeCompiler.Compile<T>> | undefined
  return (value) => {
    compiled ??= TypeCompiler.Compile(schema)
    if (compiled.Check(value)) return undefined
    const all = [...compiled.Errors(value)]
    // A misspelt key also shows as the known one missing: the misspelling is the better lead.
    const first = all.find((error) => misspelling(error) !== undefined) ?? all[0]
    /* c8 ignore next -- Check failed, so there is an error */
    if (first === undefined) return 'invalid'
    return describe(first)
  }
}

/** An option's problem, if there is one, thrown as INVALID_OPTIONS: one line, after `label` (`outbound `, `journal.`). */
export function throwInvalid (problem: string | undefined, label = ''): void {
  if (problem !== undefined) throw new errors.INVALID_OPTIONS(label + problem)
}

function describe (error: ValueError): string {
  const where = error.path === '' ? 'value' : error.path.slice(1).replaceAll('/', '.')
  const own = (error.schema as { errorMessage?: unknown }).errorMessage
  if (typeof own === 'string') return `${where} ${own}`
  const names = choices(error)
  if (names !== undefined) return `${where} must be one of ${names.join(', ')}`
  const meant = misspelling(error)
  return meant === undefined ? `${where}: ${error.message}` : `${where}: ${error.message}; did you mean ${meant}?`
}

/** The names of a union of string literals (a provider, a log level), when that is what failed. */
function choices (error: ValueError): string[] | undefined {
  if (error.type !== ValueErrorType.Union) return undefined
  const members = (error.schema as { anyOf?: Array<{ const?: unknown }> }).anyOf ?? []
  return members.length > 0 && members.every((member) => typeof member.const === 'string')
    ? members.map((member) => member.const as string)
    : undefined
}

/** For an unknown key, the known key of the same object it is closest to, if any is close. */
function misspelling (error: ValueError): string | undefined {
  if (error.type !== ValueErrorType.ObjectAdditionalProperties) return undefined
  const known = Object.keys((error.schema as { properties?: object }).properties ?? {})
  return closestName(error.path.slice(error.path.lastIndexOf('/') + 1), known)
}

/** True when `value` is an object with a function under each name (own or inherited, as pino's methods are). */
export function hasMethods (value: unknown, names: readonly string[]): boolean {
  return typeof value === 'object' && value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
}

export type { Static }

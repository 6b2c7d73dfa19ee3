import type { FastifySchemaCompiler, preValidationHookHandler } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { errors } from '../../src/shared/errors.js'

/**
 * Route input checked by TypeBox itself, the way Anvil checks its options: unknown fields are an error (not
 * silently dropped), and query strings and params are converted to the schema's numbers and booleans first.
 */
export const typeboxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const compiled = TypeCompiler.Compile(schema)
  const convert = httpPart === 'querystring' || httpPart === 'params'
  return (data: unknown) => {
    const value = convert ? Value.Convert(schema, data) : data
    if (compiled.Check(value)) return { value }
    const first = compiled.Errors(value).First()
    const where = first === undefined || first.path === '' ? httpPart ?? 'input' : first.path.slice(1).replaceAll('/', '.')
    return { error: new errors.BAD_REQUEST(`${where}: ${first?.message ?? 'invalid'}`) }
  }
}

/** The path of the first string (or key) in `value` holding a NUL, or undefined; iterative, so any depth is fine. */
export function nulPath (value: unknown, root: string): string | undefined {
  const stack: Array<[unknown, string]> = [[value, root]]
  while (stack.length > 0) {
    const [item, path] = stack.pop() as [unknown, string]
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return path
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        if (key.includes('\u0000')) return path
        stack.push([child, `${path}.${key}`])
      }
    }
  }
  return undefined
}

/**
 * No route input holds a NUL character: PostgreSQL's text and jsonb cannot store one, and no name, id or
 * filter needs it. Checked for every admin route, those without a schema too, before its own validation.
 */
export const refuseNul: preValidationHookHandler = (request, _reply, done) => {
  const parts: Array<[unknown, string]> = [[request.params, 'params'], [request.query, 'querystring'], [request.body, 'body']]
  for (const [value, part] of parts) {
    const path = nulPath(value, part)
    if (path !== undefined) return done(new errors.BAD_REQUEST(`${path.replace(/^(params|querystring|body)\./, '')}: must not contain a NUL character`))
  }
  done()
}

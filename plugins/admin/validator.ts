import type { FastifySchemaCompiler } from 'fastify'
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

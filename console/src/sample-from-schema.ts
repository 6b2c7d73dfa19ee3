// A sample of an event type's data, made from its JSON Schema, for a test event the developer may edit before it
// goes. Hand-written for the keywords the catalog's schemas use (the maintained samplers, openapi-sampler and
// json-schema-faker, bring an XML writer or a random-data generator into the page, and openapi-sampler's patterns
// know no group or anchor); a `pattern` is sampled by randexp, which builds a string from the pattern's parse tree
// (nothing is matched, so nothing backtracks) and runs in the developer's browser, never on the server. An example
// or a default the schema gives wins; every property is filled, so the whole shape shows. What the sample cannot
// promise to fit is listed (`unsure`), and the form says the sample needs editing there.
import RandExp from 'randexp'

type Schema = Record<string, unknown>

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T12:00:00Z', date: '2026-01-01', time: '12:00:00Z', email: 'developer@example.com',
  uri: 'https://example.com/', url: 'https://example.com/', uuid: '3f2b8a4e-5c1d-4e7a-9b6f-0a1c2d3e4f50',
  hostname: 'example.com', ipv4: '192.0.2.1', ipv6: '2001:db8::1'
}
/** Keywords this sampler does not honour: a sample of a schema using one may not fit. */
const UNHONOURED = ['not', '$ref', 'if', 'patternProperties', 'propertyNames', 'dependentRequired', 'dependentSchemas', 'dependencies',
  'contains', 'minProperties', 'prefixItems']
/** Longer than this, a pattern's sample is not used (a `{1000}` repetition): the form asks for an edit instead. */
const MAX_PATTERN_SAMPLE = 200

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

function number (schema: Schema, integer: boolean): number {
  const { minimum, exclusiveMinimum, maximum, multipleOf } = schema as Record<string, number | undefined>
  let value = minimum ?? (exclusiveMinimum === undefined ? 0 : exclusiveMinimum + (integer ? 1 : 0.5))
  if (maximum !== undefined && value > maximum) value = maximum
  if (multipleOf !== undefined && multipleOf > 0) value = Math.ceil(value / multipleOf) * multipleOf
  return integer ? Math.ceil(value) : value
}

/** The shortest string randexp makes of `pattern` (each choice its first, each repetition its least), or null. */
function fromPattern (pattern: string): string | null {
  try {
    const generator = new RandExp(pattern)
    generator.randInt = (min: number) => min
    const sample = generator.gen()
    // What randexp reads otherwise than the browser (`\p{…}`, lookarounds) shows here; the sample is short and made to match.
    return sample.length <= MAX_PATTERN_SAMPLE && new RegExp(pattern, 'u').test(sample) ? sample : null
  } catch {
    return null
  }
}

function string (schema: Schema, unsure: (why: string) => void): string {
  const { minLength = 0, maxLength, pattern } = schema as { minLength?: number, maxLength?: number, pattern?: unknown }
  const format = FORMATS[String(schema.format)]
  if (schema.format !== undefined && format === undefined) unsure(`format ${String(schema.format)}`)
  let value = format ?? 'string'.padEnd(minLength, 'x').slice(0, maxLength ?? Infinity)
  if (typeof pattern === 'string') {
    const sampled = format === undefined ? fromPattern(pattern) : value
    if (sampled === null || !patternHolds(pattern, sampled)) unsure(`pattern ${pattern}`)
    else value = sampled
  }
  if ([...value].length < minLength || [...value].length > (maxLength ?? Infinity)) unsure('length')
  return value
}

function patternHolds (pattern: string, value: string): boolean {
  try { return new RegExp(pattern, 'u').test(value) } catch { return false }
}

export interface Sample {
  value: unknown
  /** Where the sample may break the schema, as `path: why` (`/id: pattern ^inv_\p{L}+$`); empty when it fits. */
  unsure: string[]
}

/** A value that fits `schema` for the keywords above, and where it may not (a `$ref`, `not`, a pattern randexp cannot make). */
export function sampleWithNotes (schema: unknown): Sample {
  const unsure: string[] = []
  const value = sample(schema, '', 0, (path, why) => unsure.push(`${path === '' ? '/' : path}: ${why}`))
  return { value, unsure }
}

/** The sample alone (the catalog's examples). */
export function sampleFromSchema (schema: unknown): unknown {
  return sampleWithNotes(schema).value
}

function sample (schema: unknown, path: string, depth: number, unsure: (path: string, why: string) => void): unknown {
  if (!isSchema(schema) || depth > 10) {
    if (schema !== true && schema !== undefined) unsure(path, depth > 10 ? 'nested too deep' : 'schema')
    return null
  }
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if ('default' in schema) return schema.default
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  for (const keyword of UNHONOURED) if (keyword in schema) unsure(path, keyword)
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((part) => sample(part, path, depth + 1, unsure))
    return parts.every(isSchema) ? Object.assign({}, ...parts) : parts[0] ?? null
  }
  const choices = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
  if (choices !== undefined) return sample(choices.find((c) => isSchema(c) && c.type !== 'null') ?? choices[0], path, depth + 1, unsure)
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  const type = types.find((t) => t !== 'null') ?? types[0] ?? (isSchema(schema.properties) ? 'object' : 'items' in schema ? 'array' : undefined)
  switch (type) {
    case 'object': {
      const properties = isSchema(schema.properties) ? schema.properties : {}
      // The required properties first, in their listed order: a stored schema's own key order is PostgreSQL's.
      const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : []
      if (required.some((key) => !(key in properties))) unsure(path, 'required property without a schema')
      const keys = [...new Set([...required.filter((key) => key in properties), ...Object.keys(properties)])]
      return Object.fromEntries(keys.map((key) => [key, sample(properties[key], `${path}/${key}`, depth + 1, unsure)]))
    }
    case 'array': {
      const count = Math.min(Math.max(Number(schema.minItems ?? 1), 1), 3)
      if (Number(schema.minItems ?? 0) > 3) unsure(path, 'minItems')
      if (schema.uniqueItems === true && count > 1) unsure(path, 'uniqueItems')
      return Array.from({ length: count }, (_, i) => sample(schema.items, `${path}/${i}`, depth + 1, unsure))
    }
    case 'string': return string(schema, (why) => unsure(path, why))
    case 'integer': return number(schema, true)
    case 'number': return number(schema, false)
    case 'boolean': return true
    case undefined: return null
    case 'null': return null
    default:
      unsure(path, `type ${String(type)}`)
      return null
  }
}

// A sample of an event type's data, made from its JSON Schema, for a test event the developer may edit before it
// goes. Small and hand-written: no sampler is among the dependencies, and the well-kept ones (openapi-sampler,
// json-schema-faker) would bring an XML writer or a random-data generator into the page for the few keywords the
// catalog's schemas use. An example or a default the schema gives wins; every property is filled, so the whole
// shape shows.

type Schema = Record<string, unknown>

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T12:00:00Z', date: '2026-01-01', time: '12:00:00Z', email: 'developer@example.com',
  uri: 'https://example.com/', url: 'https://example.com/', uuid: '3f2b8a4e-5c1d-4e7a-9b6f-0a1c2d3e4f50',
  hostname: 'example.com', ipv4: '192.0.2.1', ipv6: '2001:db8::1'
}

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

function number (schema: Schema, integer: boolean): number {
  const { minimum, exclusiveMinimum, maximum, multipleOf } = schema as Record<string, number | undefined>
  let value = minimum ?? (exclusiveMinimum === undefined ? 0 : exclusiveMinimum + (integer ? 1 : 0.5))
  if (maximum !== undefined && value > maximum) value = maximum
  if (multipleOf !== undefined && multipleOf > 0) value = Math.ceil(value / multipleOf) * multipleOf
  return integer ? Math.ceil(value) : value
}

function string (schema: Schema): string {
  const format = FORMATS[String(schema.format)]
  if (format !== undefined) return format
  const { minLength = 0, maxLength } = schema as { minLength?: number, maxLength?: number }
  return 'string'.padEnd(minLength, 'x').slice(0, maxLength ?? Infinity)
}

/** A value that fits `schema` for the keywords above; null for what it cannot tell (a `$ref`, `not`). */
export function sampleFromSchema (schema: unknown, depth = 0): unknown {
  if (!isSchema(schema) || depth > 10) return null
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if ('default' in schema) return schema.default
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((part) => sampleFromSchema(part, depth + 1))
    return parts.every(isSchema) ? Object.assign({}, ...parts) : parts[0] ?? null
  }
  const choices = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
  if (choices !== undefined) return sampleFromSchema(choices.find((c) => isSchema(c) && c.type !== 'null') ?? choices[0], depth + 1)
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  const type = types.find((t) => t !== 'null') ?? types[0] ?? (isSchema(schema.properties) ? 'object' : 'items' in schema ? 'array' : undefined)
  switch (type) {
    case 'object': {
      const properties = isSchema(schema.properties) ? schema.properties : {}
      // The required properties first, in their listed order: a stored schema's own key order is PostgreSQL's.
      const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string' && key in properties) : []
      const keys = [...new Set([...required, ...Object.keys(properties)])]
      return Object.fromEntries(keys.map((key) => [key, sampleFromSchema(properties[key], depth + 1)]))
    }
    case 'array': {
      const count = Math.min(Math.max(Number(schema.minItems ?? 1), 1), 3)
      return Array.from({ length: count }, () => sampleFromSchema(schema.items, depth + 1))
    }
    case 'string': return string(schema)
    case 'integer': return number(schema, true)
    case 'number': return number(schema, false)
    case 'boolean': return true
    default: return null
  }
}

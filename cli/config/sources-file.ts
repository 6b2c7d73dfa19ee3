/**
 * The standalone gateway's sources file (`--config` / `ANVIL_CONFIG`): JSON or YAML shaped
 * `{ "sources": [ { path, provider, secrets, tolerance?, publicUrl?, idempotency?, name? } ] }`.
 * A secret written as `${NAME}` is read from the environment, so the file itself can hold no secret.
 * Errors are one INVALID_CONFIG line that names the file and the field, and never quote a secret.
 */
import { readFileSync } from 'node:fs'
import { Type } from '@sinclair/typebox'
import { parse } from 'yaml'
import { errors } from '../../src/shared/errors.js'
import type { IdempotencyStrategy } from '../../src/inbound/idempotency.js'
import type { SourceOptions } from '../../src/inbound/ingress-options.js'
import { PROVIDER_NAMES } from '../../src/providers/presets.js'
import { compileCheck } from '../../src/shared/validate.js'

/** `${NAME}`: the whole secret comes from the environment variable NAME. */
const ENV_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/

const Idempotency = Type.Union([
  Type.Union(['signature', 'payload', 'provider'].map((name) => Type.Literal(name))),
  Type.Object({ header: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  Type.Object({ bodyField: Type.String({ minLength: 1 }) }, { additionalProperties: false })
])

const SourcesFile = Type.Object({
  sources: Type.Array(Type.Object({
    path: Type.String({ pattern: '^/\\S*$' }),
    provider: Type.Optional(Type.Union(PROVIDER_NAMES.map((name) => Type.Literal(name)))),
    secrets: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    tolerance: Type.Optional(Type.Integer({ minimum: 0 })),
    publicUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
    idempotency: Type.Optional(Idempotency),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 }))
  }, { additionalProperties: false }), { minItems: 1 })
}, { additionalProperties: false })

const checkFile = compileCheck(SourcesFile)

function expandSecret (secret: string, env: Record<string, string | undefined>, where: string): string {
  const name = ENV_REFERENCE.exec(secret)?.[1]
  if (name === undefined) return secret
  const value = env[name]
  if (value === undefined || value === '') throw new errors.INVALID_CONFIG(`${where} names \${${name}}, which is not set`)
  return value
}

/** Parses and checks a sources file's text; `file` only names it in messages. */
export function parseSourcesFile (text: string, file: string, env: Record<string, string | undefined> = {}): SourceOptions[] {
  let parsed: unknown
  try {
    // YAML is a superset of JSON: one parser reads both.
    parsed = parse(text)
  } catch (err) {
    throw new errors.INVALID_CONFIG(`${file} is neither JSON nor YAML: ${(err as Error).message.split('\n')[0] ?? ''}`)
  }
  const problem = checkFile(parsed)
  // The problem names a field and the rule it breaks, never the value: a secret is never quoted back.
  if (problem !== undefined) throw new errors.INVALID_CONFIG(`${file}: ${problem}`)
  const { sources } = parsed as { sources: Array<SourceOptions & { idempotency?: IdempotencyStrategy }> }
  return sources.map((source, index) => ({
    ...source,
    secrets: source.secrets.map((secret, i) => expandSecret(secret, env, `${file}: sources.${index}.secrets.${i}`))
  }))
}

export function loadSourcesFile (file: string, env: Record<string, string | undefined> = {}): SourceOptions[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new errors.INVALID_CONFIG(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  return parseSourcesFile(text, file, env)
}

/**
 * The standalone gateway's sources file (`--config` / `ANVIL_CONFIG`): JSON or YAML shaped
 * `{ "sources": [ { path, provider, secrets, tolerance?, publicUrl?, idempotency?, name? } ] }`, the plugin's
 * `sources` (src/inbound/source-options.ts) with the idempotency strategies a file can hold. A secret written
 * as `${NAME}` is read from the environment, so the file itself can hold no secret. Errors are one
 * INVALID_CONFIG line that names the file and the field, and never quote a secret.
 */
import { readFileSync } from 'node:fs'
import { Type } from '@sinclair/typebox'
import { parse, YAMLParseError } from 'yaml'
import { errors } from '../../src/shared/errors.js'
import type { IdempotencyStrategy } from '../../src/inbound/idempotency.js'
import { sourceProperties, weakSecret, type SourceOptions } from '../../src/inbound/source-options.js'
import { compileCheck } from '../../src/shared/validate.js'
import { forwardProblem, type ForwardOptions } from '../../src/forward/forward-options.js'
import { SETTINGS } from './settings.js'

/** `${NAME}`: the whole secret comes from the environment variable NAME. */
const ENV_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/
/** Longest line of the file quoted back in a message. */
const MAX_QUOTED = 80

const Idempotency = Type.Union([
  Type.Union(['signature', 'payload', 'provider'].map((name) => Type.Literal(name))),
  Type.Object({ header: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  Type.Object({ bodyField: Type.String({ minLength: 1 }) }, { additionalProperties: false })
])

const SourcesFile = Type.Object({
  sources: Type.Array(Type.Object({
    ...sourceProperties,
    idempotency: Type.Optional(Idempotency)
  }, { additionalProperties: false }), { minItems: 1 })
}, { additionalProperties: false })

const checkFile = compileCheck(SourcesFile)

type Env = Record<string, string | undefined>

function expandSecret (secret: string, env: Env, where: string): string {
  const name = ENV_REFERENCE.exec(secret)?.[1]
  if (name === undefined) return secret
  const value = env[name]
  if (value === undefined || value === '') throw new errors.INVALID_CONFIG(`${where} names \${${name}}, which is not set`)
  return value
}

/**
 * The line the parser stopped at, fit to quote: a value that may be a secret (anything after `secrets`, or an
 * item of a list under `secrets:`) becomes `…`.
 */
function quotedLine (text: string, lineNumber: number): string {
  const lines = text.split(/\r?\n/)
  let line = lines[lineNumber - 1] ?? ''
  const inline = /secrets/.exec(line)
  if (inline !== null) {
    line = line.slice(0, inline.index + 'secrets'.length) + ': …'
  } else if (/^\s*-/.test(line)) {
    const indent = /^\s*/.exec(line)?.[0].length ?? 0
    const parent = lines.slice(0, lineNumber - 1).reverse().find((above) => above.trim() !== '' && (/^\s*/.exec(above)?.[0].length ?? 0) < indent)
    if (parent !== undefined && /secrets\s*:\s*$/.test(parent)) line = line.replace(/-.*/, '- …')
  }
  return JSON.stringify(line.length > MAX_QUOTED ? line.slice(0, MAX_QUOTED) + '…' : line)
}

function parseText (text: string, file: string): unknown {
  try {
    // YAML is a superset of JSON: one parser reads both.
    return parse(text)
  } catch (err) {
    const first = (err as Error).message.split('\n')[0] ?? ''
    const at = err instanceof YAMLParseError ? err.linePos?.[0].line : undefined
    throw new errors.INVALID_CONFIG(`${file} is neither JSON nor YAML: ${first}${at === undefined ? '' : ` ${quotedLine(text, at)}`}`)
  }
}

/**
 * What a command reads from the file: `all` (serve, dev: they verify), or `forward` (the worker verifies
 * nothing, so its pod needs only the forward secrets; the sources' `secrets` are kept as written, unread).
 */
export type SourcesUse = 'all' | 'forward'

/**
 * Parses and checks a sources file's text; `file` only names it in messages. Shared secrets must be
 * 16 bytes or more unless `allowShort` (src/signing/secret-problem.ts).
 */
export function parseSourcesFile (text: string, file: string, env: Env = {}, allowShort = false, use: SourcesUse = 'all'): SourceOptions[] {
  const parsed = parseText(text, file)
  const problem = checkFile(parsed)
  // The problem names a field and the rule it breaks, never the value: a secret is never quoted back.
  if (problem !== undefined) throw new errors.INVALID_CONFIG(`${file}: ${problem}`)
  const { sources } = parsed as { sources: Array<SourceOptions & { idempotency?: IdempotencyStrategy }> }
  return sources.map((source, index) => {
    if (use === 'forward') return source.forward === undefined ? source : { ...source, forward: readForward(source, index, file, env, allowShort) }
    const secrets = source.secrets.map((secret, i) => expandSecret(secret, env, `${file}: sources.${index}.secrets.${i}`))
    const weak = weakSecret(source.provider, secrets, allowShort, `${SETTINGS.allowShortSecrets.env as string}=true`)
    if (weak !== undefined) {
      const [i, problem] = weak
      const from = ENV_REFERENCE.exec(source.secrets[i] as string)?.[1]
      throw new errors.INVALID_CONFIG(`${file}: sources.${index}.secrets.${i}${from === undefined ? '' : ` (\${${from}})`} ${problem}`)
    }
    return source.forward === undefined ? { ...source, secrets } : { ...source, secrets, forward: readForward(source, index, file, env, allowShort) }
  })
}

function readForward (source: SourceOptions, index: number, file: string, env: Env, allowShort: boolean): ForwardOptions {
  const forward = { ...source.forward as ForwardOptions }
  forward.secret = expandSecret(forward.secret, env, `${file}: sources.${index}.forward.secret`)
  const problem = forwardProblem(forward, allowShort)
  if (problem !== undefined) throw new errors.INVALID_CONFIG(`${file}: sources.${index}.forward.${problem}`)
  return forward
}

export function loadSourcesFile (file: string, env: Env = {}, allowShort = false, use: SourcesUse = 'all'): SourceOptions[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new errors.INVALID_CONFIG(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  return parseSourcesFile(text, file, env, allowShort, use)
}

/**
 * The endpoints the ingress serves: a list of `sources` (one per provider), or the single `anvil` source of
 * the 0.1 options (`secret`/`secrets`/`scheme`/`path`/`idempotency`). Their schemas, and how they resolve
 * into a route each: a path, a scheme with its secrets, a key deriver.
 */
import { Type, type Static } from '@sinclair/typebox'
import { DEFAULT_PATH, DEFAULT_SOURCE } from '../shared/constants.js'
import { errors } from '../shared/errors.js'
import { Opaque, SourceName } from '../shared/schemas.js'
import { createKeyDeriver, type IdempotencyStrategy, type KeyDeriver } from './idempotency.js'
import {
  createPresetScheme, DEFAULT_PROVIDER, DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS, PROVIDER_NAMES, PUBLIC_KEY_PROVIDERS,
  type ProviderName
} from '../providers/presets.js'
import { anvilHmacScheme } from '../providers/anvil.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { secretProblem } from '../signing/secret-problem.js'
import { ForwardSchema, forwardProblem, type ForwardOptions } from '../forward/forward-options.js'
import { throwInvalid } from '../shared/validate.js'

/** A route: from `/`, no whitespace. */
const RoutePath = () => Type.String({ pattern: '^/\\S*$' })
const Secrets = () => Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })

/** One webhook endpoint: a path, the provider that signs what arrives there, and its secrets. */
export const sourceProperties = {
  /** The route, from `/`. */
  path: RoutePath(),
  /** The preset. @defaultValue `'anvil'` (`x-signature: sha256=<hex>`) */
  provider: Type.Optional(Type.Union(PROVIDER_NAMES.map((name) => Type.Literal(name)))),
  /** Secrets (or, for `discord` and `sendgrid`, public keys); all are tried, so rotation is adding one. At least 16 bytes each. */
  secrets: Secrets(),
  /** Seconds either way a signed timestamp may be from now, at most a day; 0 turns the check off. @defaultValue 300 */
  tolerance: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_TOLERANCE_SECONDS })),
  /** The URL as configured at the provider (scheme, host, path), for presets that sign it (twilio, square). */
  publicUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** How the dedupe key is made. @defaultValue `'provider'` (the provider's event id); `'signature'` for `anvil` */
  idempotency: Type.Optional(Opaque<IdempotencyStrategy>()),
  /** Names the source in dedupe keys and on jobs; must be unique. @defaultValue the provider's name */
  name: Type.Optional(SourceName()),
  /** The worker forwards each verified event to this URL, signed with Anvil's outgoing signature. @defaultValue none */
  forward: Type.Optional(ForwardSchema)
}

export const SourceSchema = Type.Object(sourceProperties, { additionalProperties: false })

export type SourceOptions = Static<typeof SourceSchema>

/** The one source of the 0.1 options, and `sources`, which replaces it. */
export const endpointProperties = {
  /** The HMAC secret of the default scheme, at least 16 bytes. */
  secret: Type.Optional(Type.String({ minLength: 1 })),
  /** Several secrets, tried in turn (rotation). */
  secrets: Type.Optional(Secrets()),
  /** A custom signature scheme instead of the default one. */
  scheme: Type.Optional(Opaque<SignatureScheme>()),
  /** The webhook route. @defaultValue `'/webhooks'` */
  path: Type.Optional(RoutePath()),
  /** Names the source in keys and job data, so two sources never share a dedupe key. @defaultValue `'default'` */
  source: Type.Optional(SourceName()),
  /** How the dedupe key is made. @defaultValue `'signature'` */
  idempotency: Type.Optional(Opaque<IdempotencyStrategy>()),
  /** Several endpoints, each with its own provider preset; instead of secret/secrets/scheme/path/idempotency. */
  sources: Type.Optional(Type.Array(SourceSchema, { minItems: 1 })),
  /** Accept secrets shorter than 16 bytes: for development only. @defaultValue false */
  allowShortSecrets: Type.Optional(Type.Boolean())
}

const Endpoints = Type.Object(endpointProperties)
type EndpointOptions = Static<typeof Endpoints>

/** A source ready to serve: its scheme built, its key deriver chosen. */
export interface ResolvedSource {
  name: string
  provider: string
  path: string
  scheme: SignatureScheme
  deriveKey: KeyDeriver
  publicUrl?: string
  forward?: ForwardOptions
}

/** The routes the options describe (already checked against their schema); at least one. */
export function resolveSources (opts: EndpointOptions): ResolvedSource[] {
  const allowShort = opts.allowShortSecrets === true
  if (opts.sources === undefined) return [singleSource(opts, allowShort)]
  const mixed = (['secret', 'secrets', 'scheme', 'path', 'idempotency'] as const).filter((key) => opts[key] !== undefined)
  if (mixed.length > 0) throw new errors.INVALID_OPTIONS(`sources replaces ${mixed.join(', ')}: give one or the other`)
  const resolved = opts.sources.map(resolveSource)
  for (const key of ['name', 'path'] as const) {
    const seen = new Set<string>()
    for (const source of resolved) {
      if (seen.has(source[key])) {
        throw new errors.INVALID_OPTIONS(`two sources share the ${key} "${source[key]}"${key === 'name' ? ': give each a name' : ''}`)
      }
      seen.add(source[key])
    }
  }
  opts.sources.forEach((source, index) => {
    checkSecrets(source.provider, source.secrets, `sources.${index}.secrets`, allowShort)
    throwInvalid(source.forward === undefined ? undefined : forwardProblem(source.forward, allowShort), `sources.${index}.forward.`)
  })
  return resolved
}

/** The single-source options of 0.1 (`secret`/`secrets`/`scheme`/`path`/`idempotency`): one `anvil` source. */
function singleSource (opts: EndpointOptions, allowShort: boolean): ResolvedSource {
  const secrets = opts.secrets ?? (opts.secret === undefined ? [] : [opts.secret])
  if (opts.scheme === undefined && secrets.length === 0) {
    throw new errors.INVALID_OPTIONS('secret (or secrets, or scheme) is required, or sources')
  }
  if (opts.secret !== undefined) checkSecrets(DEFAULT_PROVIDER, [opts.secret], 'secret', allowShort)
  if (opts.secrets !== undefined) checkSecrets(DEFAULT_PROVIDER, opts.secrets, 'secrets', allowShort)
  const scheme = opts.scheme ?? anvilHmacScheme(secrets)
  return {
    name: opts.source ?? DEFAULT_SOURCE,
    provider: scheme.name,
    path: opts.path ?? DEFAULT_PATH,
    scheme,
    deriveKey: createKeyDeriver(opts.idempotency)
  }
}

/**
 * The first of a source's shared secrets that breaks the rule (src/signing/secret-problem.ts), as its index
 * and the problem; Discord's and SendGrid's are public keys, which their presets check as keys.
 */
export function weakSecret (
  provider: ProviderName | undefined, secrets: readonly string[], allowShort: boolean, allowing: string
): [number, string] | undefined {
  if (PUBLIC_KEY_PROVIDERS.includes(provider ?? DEFAULT_PROVIDER)) return undefined
  for (const [index, secret] of secrets.entries()) {
    const problem = secretProblem(secret, allowShort, allowing)
    if (problem !== undefined) return [index, problem]
  }
  return undefined
}

/** `where` names the list (`secrets`) or, for one secret, the secret itself (`secret`). */
function checkSecrets (provider: ProviderName | undefined, secrets: readonly string[], where: string, allowShort: boolean): void {
  const weak = weakSecret(provider, secrets, allowShort, 'allowShortSecrets: true')
  if (weak !== undefined) throw new errors.INVALID_OPTIONS(`${where === 'secret' ? where : `${where}.${weak[0]}`} ${weak[1]}`)
}

function resolveSource (source: SourceOptions, index: number): ResolvedSource {
  const provider: ProviderName = source.provider ?? DEFAULT_PROVIDER
  const scheme = createPresetScheme(provider, {
    secrets: source.secrets,
    toleranceSeconds: source.tolerance ?? DEFAULT_TOLERANCE_SECONDS,
    publicUrl: source.publicUrl
  })
  // A header is the same for every event of a batch: all but the first would be taken for duplicates.
  if (scheme.batches === true && typeof source.idempotency === 'object' && source.idempotency !== null && 'header' in source.idempotency) {
    throw new errors.INVALID_OPTIONS(`sources.${index}.idempotency: a ${provider} body is a batch of events, which one header cannot key; use 'provider', 'payload', { bodyField } or a function`)
  }
  return {
    name: source.name ?? provider,
    provider,
    path: source.path,
    scheme,
    deriveKey: createKeyDeriver(source.idempotency ?? (provider === DEFAULT_PROVIDER ? 'signature' : 'provider')),
    publicUrl: source.publicUrl,
    ...(source.forward === undefined ? {} : { forward: source.forward })
  }
}

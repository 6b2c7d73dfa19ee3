/**
 * The CLI's configuration: flags override the environment, every value is checked with TypeBox, and a bad
 * value becomes one INVALID_CONFIG error that names the variable (or flag), what it should be, and what it
 * got. Secrets are never quoted back. Framework-free, so it can be tested without starting anything.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { DEFAULT_CONCURRENCY, DEFAULT_SHUTDOWN_TIMEOUT_MS } from './constants.js'
import { errors } from './errors.js'
import type { IdempotencyStrategy } from './idempotency.js'
import { redactUrl, redisUrlProblem } from './redis.js'
import type { SourceOptions } from './options.js'
import { loadSourcesFile } from './sources-file.js'
import { compileCheck, type Static } from './validate.js'

export const DEFAULT_PORT = 3000
/** `anvil serve` runs in containers, where only 0.0.0.0 is reachable from outside. */
export const DEFAULT_SERVE_HOST = '0.0.0.0'
/** `anvil dev` runs on a laptop: never expose it on the network by default. */
export const DEFAULT_DEV_HOST = '127.0.0.1'
export const DEFAULT_LOG_LEVEL = 'info'
export const DEFAULT_METRICS_PATH = '/metrics'
/** `ANVIL_METRICS_PATH=off`: no metrics route. */
export const METRICS_OFF = 'off'
/** The secret `anvil dev` uses when WEBHOOK_SECRET is unset; it is public, so it protects nothing. */
export const DEV_SECRET = 'whsec_dev'
/** `ANVIL_RETRY_SCHEDULE=none`: one attempt, no retries (an empty variable means "use the default"). */
export const NO_RETRIES = 'none'
/** Longest "got" quoted back in a message, so a pasted file cannot flood the terminal. */
const MAX_QUOTED = 80

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export type Env = Record<string, string | undefined>
/** Flag values as commander hands them over: strings, keyed by the camel-cased flag name. */
export type Flags = Record<string, unknown>

export interface CommonConfig {
  /** Undefined when neither REDIS_URL nor --redis-url is set: `dev` probes, the others use the default URL. */
  redisUrl?: string
  queueName?: string
  prefix?: string
  logLevel: LogLevel
}

/** For the long-running commands (serve, worker, dev). */
export interface ObservabilityConfig {
  /** Where Prometheus metrics are served; false (`off`) for nowhere. */
  metricsPath: string | false
  /** A separate port for metrics; undefined serves them on the main port. */
  metricsPort?: number
  /** Log payload bodies (`ANVIL_LOG_PAYLOADS=true`); redacted by default. */
  logPayloads: boolean
}

/** Unset optional fields fall back to the core's defaults (src/constants.ts), so they live in one place. */
export interface IngressConfig {
  host: string
  port: number
  /** WEBHOOK_SECRET: the single `anvil` source. Unset when a sources file is given. */
  secret?: string
  /** From the sources file (`--config` / ANVIL_CONFIG); replaces secret, path and idempotency. */
  sources?: SourceOptions[]
  path?: string
  bodyLimit?: number
  dedupeWindowMs?: number
  retrySchedule?: number[]
  idempotency?: IdempotencyStrategy
}

export interface WorkerConfig {
  concurrency: number
  shutdownTimeoutMs: number
}

export type ServeConfig = CommonConfig & IngressConfig & ObservabilityConfig
/** The worker serves health and metrics on HOST:PORT, so a probe can reach it. */
export type WorkerCommandConfig = CommonConfig & WorkerConfig & ObservabilityConfig & { host: string, port: number }
export type ReplayConfig = CommonConfig & { limit?: number }
export type DevConfig = CommonConfig & IngressConfig & WorkerConfig & ObservabilityConfig & {
  secret: string
  /** True when WEBHOOK_SECRET was unset and DEV_SECRET is in use. */
  devSecret: boolean
}

interface Setting<S extends TSchema> {
  /** The environment variable, if the setting has one. */
  env?: string
  /** The commander key (camel case) and the flag as typed. */
  key: string
  flag: string
  /** Completes "X must be …". */
  expected: string
  parse: (raw: string) => unknown
  check: (value: unknown) => string | undefined
  /** A rule TypeBox cannot express: true when the value breaks it. */
  breaks?: (value: Static<S>) => boolean
  /** How the raw value is quoted back in a message (a URL may hold a password). */
  show?: (raw: string) => string
  schema: S
}

function define<S extends TSchema> (
  setting: Omit<Setting<S>, 'check' | 'parse'> & { parse?: (raw: string) => unknown }
): Setting<S> {
  return { parse: (raw) => raw, ...setting, check: compileCheck(setting.schema) }
}

/** Digits stay numbers for TypeBox to judge; anything else stays a string, which fails an Integer check. */
function toInteger (raw: string): unknown {
  const trimmed = raw.trim()
  return /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : raw
}

function toSchedule (raw: string): unknown {
  if (raw.trim() === NO_RETRIES) return []
  return raw.split(',').map(toInteger)
}

const Whole = (minimum: number, maximum?: number): ReturnType<typeof Type.Integer> =>
  Type.Integer(maximum === undefined ? { minimum } : { minimum, maximum })

const SETTINGS = {
  redisUrl: define({
    env: 'REDIS_URL', key: 'redisUrl', flag: '--redis-url', expected: 'a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL',
    schema: Type.String({ minLength: 1 }),
    // src/redis.ts owns the URL rule; a password is never quoted back.
    breaks: (url) => redisUrlProblem(url) !== undefined,
    show: showUrl
  }),
  queueName: define({
    env: 'ANVIL_QUEUE', key: 'queue', flag: '--queue', expected: 'a queue name without ":"',
    schema: Type.String({ pattern: '^[^:]+$' })
  }),
  prefix: define({
    env: 'ANVIL_PREFIX', key: 'prefix', flag: '--prefix', expected: 'a non-empty key prefix', schema: Type.String({ minLength: 1 })
  }),
  logLevel: define({
    env: 'LOG_LEVEL', key: 'logLevel', flag: '--log-level', expected: `one of ${LOG_LEVELS.join(', ')}`,
    schema: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)))
  }),
  host: define({
    env: 'HOST', key: 'host', flag: '--host', expected: 'a host name or IP address', schema: Type.String({ pattern: '^\\S+$' })
  }),
  port: define({
    env: 'PORT', key: 'port', flag: '--port', expected: 'an integer from 0 to 65535', schema: Whole(0, 65535), parse: toInteger
  }),
  path: define({
    env: 'ANVIL_PATH', key: 'path', flag: '--path', expected: 'a URL path starting with "/"', schema: Type.String({ pattern: '^/\\S*$' })
  }),
  bodyLimit: define({
    env: 'ANVIL_BODY_LIMIT', key: 'bodyLimit', flag: '--body-limit', expected: 'a whole number of bytes, at least 1',
    schema: Whole(1), parse: toInteger
  }),
  dedupeWindowMs: define({
    env: 'ANVIL_DEDUPE_WINDOW_MS', key: 'dedupeWindowMs', flag: '--dedupe-window-ms',
    expected: 'a whole number of milliseconds, at least 1', schema: Whole(1), parse: toInteger
  }),
  retrySchedule: define({
    env: 'ANVIL_RETRY_SCHEDULE', key: 'retrySchedule', flag: '--retry-schedule',
    expected: `comma-separated whole milliseconds from 0 to 86400000 (e.g. 1000,5000,30000), or "${NO_RETRIES}"`,
    schema: Type.Array(Whole(0, 86_400_000)), parse: toSchedule
  }),
  idempotency: define({
    env: 'ANVIL_IDEMPOTENCY', key: 'idempotency', flag: '--idempotency',
    expected: 'signature, payload, header:<name> or body:<field>',
    schema: Type.String({ pattern: "^(signature|payload|header:[A-Za-z0-9!#$%&'*+.^_`|~-]+|body:[^\\s.]+(\\.[^\\s.]+)*)$" })
  }),
  concurrency: define({
    env: 'WORKER_CONCURRENCY', key: 'concurrency', flag: '--concurrency', expected: 'an integer from 1 to 10000',
    schema: Whole(1, 10_000), parse: toInteger
  }),
  shutdownTimeoutMs: define({
    env: 'ANVIL_SHUTDOWN_TIMEOUT_MS', key: 'shutdownTimeoutMs', flag: '--shutdown-timeout-ms',
    expected: 'a whole number of milliseconds, at least 0', schema: Whole(0), parse: toInteger
  }),
  metricsPath: define({
    env: 'ANVIL_METRICS_PATH', key: 'metricsPath', flag: '--metrics-path', expected: `a URL path starting with "/", or "${METRICS_OFF}"`,
    schema: Type.String({ pattern: `^(${METRICS_OFF}|/\\S*)$` })
  }),
  metricsPort: define({
    env: 'ANVIL_METRICS_PORT', key: 'metricsPort', flag: '--metrics-port', expected: 'an integer from 0 to 65535',
    schema: Whole(0, 65535), parse: toInteger
  }),
  logPayloads: define({
    env: 'ANVIL_LOG_PAYLOADS', key: 'logPayloads', flag: '--log-payloads', expected: 'true or false',
    schema: Type.Union([Type.Literal('true'), Type.Literal('false')])
  }),
  config: define({
    env: 'ANVIL_CONFIG', key: 'config', flag: '--config', expected: 'the path of a JSON or YAML sources file',
    schema: Type.String({ minLength: 1 })
  }),
  limit: define({
    key: 'limit', flag: '--limit', expected: 'an integer of at least 1', schema: Whole(1), parse: toInteger
  })
}

/** Every environment variable the CLI reads (the container test checks deployments set no other). */
export const CONFIG_ENV_VARS: readonly string[] = [
  ...Object.values(SETTINGS).flatMap((setting) => setting.env === undefined ? [] : [setting.env]), 'WEBHOOK_SECRET'
]

/** The URL as typed, unless it holds a password (or cannot be parsed, so might): then redactUrl's form. */
function showUrl (raw: string): string {
  try {
    if (new URL(raw).password === '') return raw
  } catch {}
  return redactUrl(raw)
}

function quote (text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED ? text.slice(0, MAX_QUOTED) + '…' : text)
}

/** A setting's value, from its flag, else its environment variable (empty counts as unset), else undefined. */
function read<S extends TSchema> (setting: Setting<S>, env: Env, flags: Flags): Static<S> | undefined {
  const flagged = flags[setting.key]
  const fromFlag = typeof flagged === 'string'
  const envValue = setting.env === undefined ? undefined : env[setting.env]
  const raw = fromFlag ? flagged : envValue === '' ? undefined : envValue
  if (raw === undefined) return undefined
  const value = setting.parse(raw)
  if (setting.check(value) !== undefined || setting.breaks?.(value as Static<S>) === true) {
    const name = fromFlag || setting.env === undefined ? setting.flag : setting.env
    throw new errors.INVALID_CONFIG(`${name} must be ${setting.expected} (got ${quote(setting.show?.(raw) ?? raw)})`)
  }
  return value as Static<S>
}

function toStrategy (value: string): IdempotencyStrategy {
  if (value.startsWith('header:')) return { header: value.slice('header:'.length) }
  if (value.startsWith('body:')) return { bodyField: value.slice('body:'.length) }
  return value as 'signature' | 'payload'
}

/** The secret comes from the environment only: a flag would show it in `ps` and in shell history. */
function readSecret (env: Env): string | undefined {
  const secret = env.WEBHOOK_SECRET
  return secret === undefined || secret === '' ? undefined : secret
}

function common (env: Env, flags: Flags): CommonConfig {
  return {
    redisUrl: read(SETTINGS.redisUrl, env, flags),
    queueName: read(SETTINGS.queueName, env, flags),
    prefix: read(SETTINGS.prefix, env, flags),
    logLevel: read(SETTINGS.logLevel, env, flags) ?? DEFAULT_LOG_LEVEL
  }
}

function observability (env: Env, flags: Flags): ObservabilityConfig {
  const metricsPath = read(SETTINGS.metricsPath, env, flags) ?? DEFAULT_METRICS_PATH
  return {
    metricsPath: metricsPath === METRICS_OFF ? false : metricsPath,
    metricsPort: read(SETTINGS.metricsPort, env, flags),
    logPayloads: read(SETTINGS.logPayloads, env, flags) === 'true'
  }
}

/** The sources file, when one is named; it replaces the single-source settings, so they may not be set too. */
function sourcesFile (env: Env, flags: Flags): SourceOptions[] | undefined {
  const file = read(SETTINGS.config, env, flags)
  if (file === undefined) return undefined
  for (const setting of [SETTINGS.path, SETTINGS.idempotency]) {
    if (read(setting, env, flags) !== undefined) {
      throw new errors.INVALID_CONFIG(`${setting.env ?? setting.flag} does not go with a sources file (${SETTINGS.config.env}): set it per source there`)
    }
  }
  return loadSourcesFile(file, env)
}

function ingress (env: Env, flags: Flags, defaultHost: string, secret: string | undefined): IngressConfig {
  const idempotency = read(SETTINGS.idempotency, env, flags)
  const sources = sourcesFile(env, flags)
  return {
    ...(sources === undefined ? {} : { sources }),
    host: read(SETTINGS.host, env, flags) ?? defaultHost,
    port: read(SETTINGS.port, env, flags) ?? DEFAULT_PORT,
    secret,
    path: read(SETTINGS.path, env, flags),
    bodyLimit: read(SETTINGS.bodyLimit, env, flags),
    dedupeWindowMs: read(SETTINGS.dedupeWindowMs, env, flags),
    retrySchedule: read(SETTINGS.retrySchedule, env, flags),
    idempotency: idempotency === undefined ? undefined : toStrategy(idempotency)
  }
}

function worker (env: Env, flags: Flags): WorkerConfig {
  return {
    concurrency: read(SETTINGS.concurrency, env, flags) ?? DEFAULT_CONCURRENCY,
    shutdownTimeoutMs: read(SETTINGS.shutdownTimeoutMs, env, flags) ?? DEFAULT_SHUTDOWN_TIMEOUT_MS
  }
}

export function loadServeConfig (env: Env, flags: Flags = {}): ServeConfig {
  const secret = readSecret(env)
  if (secret === undefined && read(SETTINGS.config, env, flags) === undefined) {
    throw new errors.INVALID_CONFIG('WEBHOOK_SECRET is required: set it to the secret your webhook sender signs with')
  }
  return { ...common(env, flags), ...ingress(env, flags, DEFAULT_SERVE_HOST, secret), ...observability(env, flags) }
}

export function loadWorkerConfig (env: Env, flags: Flags = {}): WorkerCommandConfig {
  return {
    ...common(env, flags),
    ...worker(env, flags),
    ...observability(env, flags),
    host: read(SETTINGS.host, env, flags) ?? DEFAULT_SERVE_HOST,
    port: read(SETTINGS.port, env, flags) ?? DEFAULT_PORT
  }
}

export function loadReplayConfig (env: Env, flags: Flags = {}): ReplayConfig {
  return { ...common(env, flags), limit: read(SETTINGS.limit, env, flags) }
}

export function loadDevConfig (env: Env, flags: Flags = {}): DevConfig {
  const secret = readSecret(env)
  return {
    ...common(env, flags),
    ...ingress(env, flags, DEFAULT_DEV_HOST, secret ?? DEV_SECRET),
    ...worker(env, flags),
    ...observability(env, flags),
    secret: secret ?? DEV_SECRET,
    devSecret: secret === undefined
  }
}

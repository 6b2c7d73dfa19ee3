/**
 * One row of the settings table (cli/config/settings.ts) and how it is read: `read` turns a bad value into one
 * INVALID_CONFIG error that names the variable (or flag), what it should be, and what it got.
 */
import type { TInteger, TSchema } from '@sinclair/typebox'
import { errors } from '../../src/shared/errors.js'
import { compileCheck, type Static } from '../../src/shared/validate.js'
import { NO_RETRIES } from './cli-constants.js'

/** Longest "got" quoted back in a message, so a pasted file cannot flood the terminal. */
const MAX_QUOTED = 80

export type Env = Record<string, string | undefined>
/** Flag values as commander hands them over: strings, keyed by the camel-cased flag name. */
export type Flags = Record<string, unknown>

export interface Setting<S extends TSchema, T = Static<S>, F extends T | undefined = T | undefined> {
  /** The environment variable, if the setting has one. */
  env?: string
  /** The commander key (camel case), the flag as typed, and its value's name in `--help`; no flag for a secret. */
  key: string
  flag?: string
  value?: string
  /** The flag's line in `--help`. */
  description: string
  /** The default as it would be typed, for `--help`; the loaders fall back to the same value. */
  default?: string
  /** How `--help` words the default, where the value alone would not say it (`1048576 (1 MiB)`). */
  defaultShown?: string
  /** Completes "X must be …". */
  expected: string
  parse: (raw: string) => unknown
  check: (value: unknown) => string | undefined
  /** A rule TypeBox cannot express, for a value the schema accepted: what is wrong ("must be …"), or undefined. */
  breaks?: (value: Static<S>) => string | undefined
  /** How the raw value is quoted back in a message (a URL may hold a password). */
  show?: (raw: string) => string
  schema: S
  /** What the configuration holds for the value read (`'true'` → true). @defaultValue the value as read */
  to?: (value: Static<S>) => T
  /** The configuration's value when the setting is unset; `--help` shows it as the default unless `default` says otherwise. */
  fallback?: F
}

type SettingInput<S extends TSchema, T> = Omit<Setting<S, T>, 'check' | 'parse' | 'fallback'> & { parse?: (raw: string) => unknown }

/**
 * A row of the table: the one place a setting is stated. Its value's type in a command's configuration is
 * derived from it (`Value`: the schema's, or what `to` maps it to; never undefined with a `fallback`).
 */
export function define<S extends TSchema, T = Static<S>> (setting: SettingInput<S, T> & { fallback: NoInfer<T> }): Setting<S, T, T>
export function define<S extends TSchema, T = Static<S>> (setting: SettingInput<S, T> & { fallback?: undefined }): Setting<S, T, undefined>
export function define<S extends TSchema, T> (setting: SettingInput<S, T> & { fallback?: T }): Setting<S, T, T | undefined> {
  const shown = setting.default ?? (setting.fallback === undefined ? undefined : String(setting.fallback))
  return { parse: (raw) => raw, ...setting, ...(shown === undefined ? {} : { default: shown }), check: compileCheck(setting.schema) }
}

/** What a setting gives a command's configuration. */
export type Value<X> = X extends Setting<infer _S, infer T, infer F> ? ([F] extends [undefined] ? T | undefined : T) : never

/** Digits stay numbers for TypeBox to judge; anything else stays a string, which fails an Integer check. */
export function toInteger (raw: string): unknown {
  const trimmed = raw.trim()
  return /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : raw
}

/**
 * A whole-number setting read with `schema`, the core option's own: "X must be …" quotes that schema's bounds
 * (`an integer from 1 to 10000`, or with a unit `a whole number of milliseconds, at least 500`), so the CLI's rule
 * and the option's cannot part.
 */
export function whole (schema: TInteger, unit?: string): { schema: TInteger, expected: string, parse: typeof toInteger } {
  const minimum = schema.minimum ?? 0
  const maximum = schema.maximum ?? Number.MAX_SAFE_INTEGER
  const expected = unit !== undefined
    ? `a whole number of ${unit}, at least ${minimum}`
    : maximum < Number.MAX_SAFE_INTEGER ? `an integer from ${minimum} to ${maximum}` : `an integer of at least ${minimum}`
  return { schema, expected, parse: toInteger }
}

/** A retry schedule: whole milliseconds, comma-separated, or `none` for no retries. */
export function toSchedule (raw: string): unknown {
  if (raw.trim() === NO_RETRIES) return []
  return raw.split(',').map(toInteger)
}

function quote (text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED ? text.slice(0, MAX_QUOTED) + '…' : text)
}

/** How a message names a setting: by its flag when the flag was given, else by its environment variable. */
export function nameOf<S extends TSchema, T, F extends T | undefined> (setting: Setting<S, T, F>, flags: Flags): string {
  return (typeof flags[setting.key] === 'string' ? setting.flag : undefined) ?? setting.env ?? setting.flag ?? setting.key
}

/** A setting's value, from its flag, else its environment variable (empty counts as unset), else undefined. */
export function read<S extends TSchema, T, F extends T | undefined> (setting: Setting<S, T, F>, env: Env, flags: Flags): Static<S> | undefined {
  const flagged = setting.flag === undefined ? undefined : flags[setting.key]
  const fromFlag = typeof flagged === 'string'
  const envValue = setting.env === undefined ? undefined : env[setting.env]
  const raw = fromFlag ? flagged : envValue === '' ? undefined : envValue
  if (raw === undefined) return undefined
  const value = setting.parse(raw)
  const problem = setting.check(value) === undefined ? setting.breaks?.(value as Static<S>) : `must be ${setting.expected}`
  if (problem !== undefined) throw new errors.INVALID_CONFIG(`${nameOf(setting, flags)} ${problem} (got ${quote(setting.show?.(raw) ?? raw)})`)
  return value as Static<S>
}

/**
 * A setting as the configuration holds it: read, mapped by `to`, else its `fallback`. A command whose default
 * differs from the table's (`anvil dev`'s host) names it as typed, `unset`, which is read as if it were set.
 */
export function valueOf<S extends TSchema, T, F extends T | undefined> (setting: Setting<S, T, F>, env: Env, flags: Flags, unset?: string): Value<Setting<S, T, F>> {
  const value = read(setting, env, flags) ?? (unset === undefined ? undefined : setting.parse(unset) as Static<S>)
  if (value === undefined) return setting.fallback as Value<Setting<S, T, F>>
  return (setting.to === undefined ? value : setting.to(value)) as Value<Setting<S, T, F>>
}

/**
 * The CLI's settings table: every environment variable and flag, and what it must be (how a row is read:
 * cli/config/setting.ts), grouped by what they configure (the server, the worker, what needs a database);
 * secrets are never quoted back. The loaders that group settings per command are in cli/config/load-config.ts.
 */
import { DEFAULT_METRICS_PATH } from '../../src/shared/constants.js'
import { SERVER_SETTINGS } from './server-settings.js'
import { WORKER_SETTINGS } from './worker-settings.js'
import { OUTBOUND_SETTINGS } from './outbound-settings.js'
import { TRACING_ENV_VARS } from './cli-constants.js'

export { DEFAULT_METRICS_PATH }
export * from './cli-constants.js'
export { nameOf, read, valueOf, type Env, type Flags } from './setting.js'
import { valueOf, type Env, type Flags, type Setting, type Value } from './setting.js'
import type { TSchema } from '@sinclair/typebox'

type AnySetting = Setting<TSchema, unknown, unknown>

export const SETTINGS = { ...SERVER_SETTINGS, ...WORKER_SETTINGS, ...OUTBOUND_SETTINGS }

export type SettingKey = keyof typeof SETTINGS

/** A group of settings as a command's configuration holds them: each by its key, typed by its row. */
export type Loaded<K extends SettingKey> = { [P in K]: Value<(typeof SETTINGS)[P]> }

/** Per command, what `--help` says of a setting where the command differs from the table; a `default` is the command's own. */
export type DefaultsShown = Partial<Record<SettingKey, { default?: string, shown?: string, description?: string }>>

/**
 * Reads every setting of a group (cli/config/options.ts `SETTING_GROUPS`) into its configuration; `defaults`
 * are the command's own (`anvil dev`'s host), as `--help` shows them.
 */
export function readGroup<K extends SettingKey> (keys: readonly K[], env: Env, flags: Flags, defaults: DefaultsShown = {}): Loaded<K> {
  // Each row's own type is in `Loaded`; the loop sees only their union.
  return Object.fromEntries(keys.map((key) => [key, valueOf(SETTINGS[key] as unknown as AnySetting, env, flags, defaults[key]?.default)])) as unknown as Loaded<K>
}

/** Rows an option nests under names of its own (`{ publicUrl: 'portalPublicUrl' }`): cli/config/options.ts `NESTED`. */
export type FieldNames = Readonly<Record<string, SettingKey>>

/** The settings of `M` under its names, each present only when set. */
export type Fields<M extends FieldNames> = { [P in keyof M]?: Exclude<Value<(typeof SETTINGS)[M[P]]>, undefined> }

/** `T` with the fields `K` set: an option that is there only with them (the admin API with its token). */
export type Needs<T, K extends keyof T> = T & { [P in K]-?: Exclude<T[P], undefined> }

/** The settings of `names` under their names, only those set; undefined when none is. */
export function readFields<M extends FieldNames> (names: M, env: Env, flags: Flags): Fields<M> | undefined {
  const set = Object.entries(names).flatMap(([name, key]) => {
    const value = valueOf(SETTINGS[key] as unknown as AnySetting, env, flags)
    return value === undefined ? [] : [[name, value] as const]
  })
  return set.length === 0 ? undefined : Object.fromEntries(set) as Fields<M>
}

/** A group's keys but those a configuration nests (`NESTED`) or reads into something else (the sources file). */
export function except<K extends SettingKey, X extends SettingKey> (keys: readonly K[], left: readonly X[]): Array<Exclude<K, X>> {
  return keys.filter((key): key is Exclude<K, X> => !(left as readonly SettingKey[]).includes(key))
}

/** Every environment variable the CLI reads (the container test checks deployments set no other). */
export const CONFIG_ENV_VARS: readonly string[] = [
  ...Object.values(SETTINGS).flatMap((setting) => setting.env === undefined ? [] : [setting.env]), 'WEBHOOK_SECRET', 'ANVIL_SEND_SECRET',
  ...TRACING_ENV_VARS
]

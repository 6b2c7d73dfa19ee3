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

/** Reads every setting of a group (cli/config/options.ts `SETTING_GROUPS`) into its configuration. */
export function readGroup<K extends SettingKey> (keys: readonly K[], env: Env, flags: Flags): Loaded<K> {
  // Each row's own type is in `Loaded`; the loop sees only their union.
  return Object.fromEntries(keys.map((key) => [key, valueOf(SETTINGS[key] as unknown as AnySetting, env, flags)])) as unknown as Loaded<K>
}

/** Every environment variable the CLI reads (the container test checks deployments set no other). */
export const CONFIG_ENV_VARS: readonly string[] = [
  ...Object.values(SETTINGS).flatMap((setting) => setting.env === undefined ? [] : [setting.env]), 'WEBHOOK_SECRET', 'ANVIL_SEND_SECRET',
  ...TRACING_ENV_VARS
]

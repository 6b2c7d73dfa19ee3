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
export { nameOf, read, type Env, type Flags } from './setting.js'

export const SETTINGS = { ...SERVER_SETTINGS, ...WORKER_SETTINGS, ...OUTBOUND_SETTINGS }

export type SettingKey = keyof typeof SETTINGS

/** Every environment variable the CLI reads (the container test checks deployments set no other). */
export const CONFIG_ENV_VARS: readonly string[] = [
  ...Object.values(SETTINGS).flatMap((setting) => setting.env === undefined ? [] : [setting.env]), 'WEBHOOK_SECRET', 'ANVIL_SEND_SECRET',
  ...TRACING_ENV_VARS
]

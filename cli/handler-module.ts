import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { errors } from '../src/shared/errors.js'
import type { WebhookHandler } from '../src/worker/worker.js'

type Module = Record<string, unknown>

function handlerOf (mod: Module): WebhookHandler | undefined {
  const fallback = mod.default as Module | undefined
  // ESM default, ESM/CJS named `handler` or `router` (createRouter() is a handler), then a CJS export Node's import did not lift.
  for (const candidate of [mod.default, mod.handler, mod.router, fallback?.handler, fallback?.router]) {
    if (typeof candidate === 'function') return candidate as WebhookHandler
  }
  return undefined
}

/** Loads the user's handler module (ESM or CommonJS), resolved against the working directory. */
export async function loadHandler (specifier: string, cwd = process.cwd()): Promise<{ handler: WebhookHandler, file: string }> {
  const file = resolve(cwd, specifier)
  let mod: Module
  try {
    mod = await import(pathToFileURL(file).href) as Module
  } catch (err) {
    throw new errors.INVALID_CONFIG(`--handler ${specifier} could not be loaded: ${(err as Error).message}`)
  }
  const handler = handlerOf(mod)
  if (handler === undefined) {
    throw new errors.INVALID_CONFIG(`--handler ${specifier} exports no handler: export a default function or router, or one named "handler" or "router"`)
  }
  return { handler, file }
}

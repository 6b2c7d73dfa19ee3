import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
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

const TYPESCRIPT = /\.[cm]?tsx?$/

/**
 * A TypeScript handler needs a loader: Node's own where it strips types (22.6+ with a flag, 23.6+ by
 * default), else the tsx of the user's project. Without either: one line saying how.
 */
async function registerTypeScript (specifier: string, cwd: string): Promise<void> {
  if ((process.features as { typescript?: unknown }).typescript) return
  let manifest: string | undefined
  try {
    manifest = createRequire(join(cwd, 'package.json')).resolve('tsx/package.json')
  } catch {}
  // tsx's ESM API, by its own exports map: its CommonJS build cannot be required from here.
  const { exports } = manifest === undefined ? {} : JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, { import?: { default?: string } }> }
  const entry = exports?.['./esm/api']?.import?.default
  if (manifest !== undefined && entry !== undefined) {
    const api = await import(pathToFileURL(join(dirname(manifest), entry)).href) as { register: () => unknown }
    api.register()
    return
  }
  throw new errors.INVALID_CONFIG(`--handler ${specifier} is TypeScript, which Node ${process.version} cannot load alone: install tsx (npm install --save-dev tsx) and run again, or give the compiled .js`)
}

/** Loads the user's handler module (ESM or CommonJS), resolved against the working directory. */
export async function loadHandler (specifier: string, cwd = process.cwd()): Promise<{ handler: WebhookHandler, file: string }> {
  const file = resolve(cwd, specifier)
  if (TYPESCRIPT.test(file)) await registerTypeScript(specifier, cwd)
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

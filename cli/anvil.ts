#!/usr/bin/env node
/** The `anvil` command: the program of cli/program.ts, with a one-line error for a problem the user has to fix. */
import { createRequire } from 'node:module'

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string }

/** One line on stderr, exit 1: no stack trace for a problem the user has to fix. */
function exitWithError (err: unknown): never {
  const message = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ')
  // "Invalid configuration: …" reads as "anvil: invalid configuration: …"; "REDIS_URL …" stays as is.
  const sentence = /^[A-Z][a-z]/.test(message) ? message.charAt(0).toLowerCase() + message.slice(1) : message
  process.stderr.write(`anvil: ${sentence}\n`)
  process.exit(1)
}

// `anvil --version` alone is answered before the program, its settings table and their schemas are loaded.
if (process.argv.length === 3 && (process.argv[2] === '--version' || process.argv[2] === '-V')) {
  process.stdout.write(`${version}\n`)
} else {
  const { createProgram } = await import('./program.js')
  try {
    await createProgram(version).parseAsync()
  } catch (err) {
    exitWithError(err)
  }
}

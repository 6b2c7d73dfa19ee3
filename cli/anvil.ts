#!/usr/bin/env node
/** The `anvil` command: the program of cli/program.ts, with a one-line error for a problem the user has to fix. */
import { createRequire } from 'node:module'
import { errorLine } from './error-line.js'

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string }

/** One line on stderr, exit 1: no stack trace for a problem the user has to fix. */
function exitWithError (err: unknown): never {
  process.stderr.write(`${errorLine(err)}\n`)
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

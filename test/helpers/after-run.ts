/**
 * tap's `after` script (package.json): drops the PostgreSQL templates this run migrated (test/helpers/pg.ts).
 * tap's runner is the parent of this script as of every test file.
 */
import { dropRunTemplates } from './pg.js'

dropRunTemplates(String(process.ppid)).catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})

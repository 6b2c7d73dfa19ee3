import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { PROVIDER_NAMES } from '../../src/providers/index.js'

// bench/verify.mjs runs (on a tiny iteration count; no timing is asserted) and reports every preset
// next to the raw-HMAC baseline. It imports dist/, which `npm test` builds first.
t.test('bench/verify.mjs prints a row per preset and the raw HMAC baseline', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['bench/verify.mjs', '--iterations', '20', '--runs', '2'])
  t.match(stdout, /^raw crypto HMAC/m)
  t.match(stdout, /late − early/)
  for (const name of PROVIDER_NAMES) t.match(stdout, new RegExp(`^${name} `, 'm'), name)
})

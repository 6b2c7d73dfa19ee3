/**
 * The committed Stripe and GitHub event names match the installed packages: upgrading `stripe` or
 * `@octokit/openapi-webhooks-types` without running scripts/generate-event-types.mjs fails here.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { ROOT } from '../helpers/root.js'

const root = ROOT

t.test('src/handlers/generated is what the installed packages give', async (t) => {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['scripts/generate-event-types.mjs', '--check'], { cwd: root })
  t.equal(stderr, '')
  t.match(stdout, /^stripe: \d{3} event types; github: \d{3} event names\n$/)
})

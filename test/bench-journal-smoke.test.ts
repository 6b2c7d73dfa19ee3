import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

// Not a test of figures: bench/journal.mjs runs once on a tiny load (`--quick`) to show that it still runs, exits 0
// and reports its table. It imports dist/ and makes (and drops) a database of its own on the test PostgreSQL.
const run = promisify(execFile)
t.setTimeout(300_000)

t.test('bench/journal.mjs runs alone and prints the drain table and the bulk replay rate', async (t) => {
  const env = { ...process.env, ...(process.env.ANVIL_TEST_PG_URL === undefined ? {} : { ANVIL_BENCH_PG_URL: process.env.ANVIL_TEST_PG_URL }) }
  const { stdout } = await run(process.execPath, ['bench/journal.mjs', '--quick'], { timeout: 240_000, env })
  t.match(stdout, /^## Event journal/m)
  t.match(stdout, /^\| 10 \| journal \| \d+ \| [\d.]+ \| \d+ \| \d+ \| \d+ \| \d+ \| [\d.]+ \|$/m)
  t.match(stdout, /^\| 50 \| effect \| \d+ \| [\d.]+ \| \d+ \| \d+ \| \d+ \| \d+ \| [\d.]+ \|$/m)
  t.match(stdout, /journal \+ once \/ effect .* [\d.]+ in jobs\/s/)
  t.match(stdout, /replayed by one run .*: \d+ events\/s/s)
})

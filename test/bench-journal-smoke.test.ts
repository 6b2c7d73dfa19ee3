import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

// Not a test of figures: bench/journal.mjs runs once on a tiny load (`--quick`) to show that it still runs, exits 0
// and reports its tables, group commit and graphile-worker's sides included. It imports dist/ and makes (and drops)
// a database of its own on the test PostgreSQL.
const run = promisify(execFile)
t.setTimeout(480_000)

t.test('bench/journal.mjs runs alone and prints the drain table, the paired ratios and the bulk replay rate', async (t) => {
  const args = ['bench/journal.mjs', '--quick', '--concurrency', '10,50', '--sides', 'effect,journal,group,graphile,graphile-batched']
  const { stdout } = await run(process.execPath, args, { timeout: 420_000 })
  t.match(stdout, /^## Event journal/m)
  const row = (concurrency: number, side: string): RegExp => new RegExp(`^\\| ${concurrency} \\| ${side} \\| \\d+ \\| — \\| \\d+ \\| \\d+ \\| \\d+ \\| \\d+ \\| — \\| \\d+ \\|$`, 'm')
  t.match(stdout, row(10, 'journal'))
  t.match(stdout, row(50, 'effect'))
  t.match(stdout, row(10, 'group'))
  t.match(stdout, row(50, 'graphile-batched'))
  const pairs: Array<[string, string]> = [['journal / effect', '0.7'], ['group / effect', '2'], ['journal / graphile', '1'], ['group / graphile-batched', '1']]
  for (const [pair, target] of pairs) {
    t.match(stdout, new RegExp(`^\\| 10 \\| ${pair} \\| ≥ ${target} \\| [\\d.]+ \\| [\\d.]+ \\|$`, 'm'), pair)
  }
  t.match(stdout, /replayed by one run .*: \d+ events\/s/s)
})

t.test('bench/journal-statements.mjs prints a line per statement shape, with the floor and the journal\'s transaction', async (t) => {
  const { stdout } = await run(process.execPath, ['bench/journal-statements.mjs', '--quick'], { timeout: 120_000 })
  t.match(stdout, /^## The journal's statements, one at a time/m)
  t.match(stdout, /^\| the floor: one autocommitted INSERT of the effect \| \d+ \| \d+ \| \d+ \|$/m)
  t.match(stdout, /^\| the journal's transaction: once\(\) .* \| \d+ \| \d+ \| \d+ \|$/m)
  t.match(stdout, /^\| the rows batched, 50 outcomes in one statement .* \| \d+ \| \d+ \| \d+ \|$/m)
})

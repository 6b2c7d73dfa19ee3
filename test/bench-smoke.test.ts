import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PROVIDER_NAMES } from '../src/providers/presets.js'

// Benchmarks are not tests: nothing here looks at a figure. Each bench runs once on a tiny load (`--quick`) to
// show that it still runs, exits 0 and reports every section and field. The benches import dist/, which
// `npm test` builds first; each starts its own redis-server and processes on loopback and stops them.
const run = promisify(execFile)
const GIVE_UP_MS = 420_000
// The benches run one after another (run.mjs's eight among them); on a loaded 2-core machine that passes tap's 120 s.
t.setTimeout(900_000)

t.test('bench/console-page.mjs runs alone and prints a row per request over its own journal, then drops it', async (t) => {
  const { stdout } = await run(process.execPath, ['bench/console-page.mjs', '--quick'], { timeout: GIVE_UP_MS })
  t.match(stdout, /^## Console first page/m)
  for (const query of ['', '?status=failed', '?provider=github&type=issues', '?since=24h', '?status=dead&since=7d', '?text=note%20999']) {
    t.match(stdout, new RegExp(`^\\| \`/admin/events${query.replace(/[?]/g, '\\?')}\` \\| \\d+ \\| [\\d.]+ `, 'm'), query || 'first page')
  }
})

t.test('bench/job-cost.mjs runs alone and prints a row per job: the floor, Anvil, Anvil with the default retention, the what-if', async (t) => {
  const { stdout } = await run(process.execPath, ['bench/job-cost.mjs', '--quick'], { timeout: GIVE_UP_MS })
  t.match(stdout, /^## Cost of one add, by what the job holds/m)
  t.match(stdout, /^\| floor \| [\d.]+ \| [\d.]+ \| \d+ \|$/m)
  t.match(stdout, /^\| anvil \| [\d.]+ \| [\d.]+ \| \d+ \|$/m)
  t.match(stdout, /^\| anvil, default retention on the job \| [\d.]+ \| [\d.]+ \| \d+ \|$/m)
  t.match(stdout, /^\| anvil, no repeated header values \| /m)
})

t.test('bench/outbound-hostile.mjs runs alone and prints the healthy tenant alone and beside the hostile endpoints', { timeout: GIVE_UP_MS }, async (t) => {
  const { stdout } = await run(process.execPath, ['bench/outbound-hostile.mjs', '--quick'], { timeout: GIVE_UP_MS })
  t.match(stdout, /^## Outbound hostile receivers/m)
  t.match(stdout, /^\| alone \| \d+\/\d+ \| \d+ \| \d+ \| \d+ \|$/m)
  t.match(stdout, /^\| beside 2 hanging and 2 trickling endpoints of another tenant, \d+ jobs\/s each \| \d+\/\d+ \| \d+ \| \d+ \| \d+ \|$/m)
  t.match(stdout, /^p99 beside \/ p99 alone: [\d.]+\. Load average/m)
})

t.test('bench/outbound-fairness.mjs runs alone and prints the quiet tenant alone and beside the noisy one, with the deadlocks', { timeout: GIVE_UP_MS }, async (t) => {
  const { stdout } = await run(process.execPath, ['bench/outbound-fairness.mjs', '--quick'], { timeout: GIVE_UP_MS })
  t.match(stdout, /^## Outbound fairness between tenants/m)
  t.match(stdout, /^\| alone \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m)
  t.match(stdout, /^\| beside the noisy tenant \(\d+ × \d+ deliveries, \d+ retries\) \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m)
  t.match(stdout, /^p99 beside \/ p99 alone per round: [\d.]+\. Deadlocks: \d+ in pg_stat_database, \d+ `deadlock detected` lines\./m)
})

t.test('npm run bench (bench/run.mjs --quick --profile) writes one report with every section, verify\'s and outbound-delivery\'s rows as they print alone', { timeout: GIVE_UP_MS }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-bench-smoke-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const out = join(dir, 'report')
  await run(process.execPath, ['bench/run.mjs', '--quick', '--profile', '--out', out], { timeout: GIVE_UP_MS, maxBuffer: 16 * 1024 * 1024 })

  const md = readFileSync(out + '.md', 'utf8')
  t.match(md, /^Commit \S+, \S+\. .+, \d+ cores, Node v\d+\.\d+\.\d+, Redis \d+\.\d+/m, 'the machine')
  for (const heading of ['Summary', 'Ingress', 'Signature verification', 'Worker drain', 'End to end', 'Redis memory per event', 'Outbound delivery', 'Outbound publish and latency', 'CPU profile of the ingress']) {
    t.match(md, new RegExp(`^## ${heading}$`, 'm'), heading)
  }
  // verify's and outbound-delivery's tables, as each prints them alone: run.mjs takes a section's markdown as is
  t.match(md, /^\| raw crypto HMAC \| \d/m)
  t.match(md, /late − early/)
  for (const name of PROVIDER_NAMES) t.match(md, new RegExp(`^\\| ${name} \\| -?\\d`, 'm'), name)
  // deliveries/s of each side, their ratio, then each side's CPU µs per delivery and the CPU ratio
  for (const endpoints of [1, 10]) t.match(md, new RegExp(`^\\| ${endpoints} \\| \\d+ \\| \\d+ \\| [\\d.]+ \\| \\d+ \\| \\d+ \\| [\\d.]+ \\|$`, 'm'), `${endpoints} endpoint(s)`)
  t.match(md, /^\| on \(3 failures, 60 s open\) \| \d+\/\d+ \| \d+ \| \d+ \| \d+ \|$/m)
  t.match(md, /^\| off \(the per-endpoint cap alone\) \| \d+\/\d+ \|/m)
  // The delivery log's true cost: each side at each endpoint count, its rate against graphile-worker batched, CPU per delivery of node, Redis, PostgreSQL
  for (const endpoints of [1, 10]) {
    for (const side of ['anvil', 'anvil-log', 'graphile', 'graphile-batched']) {
      t.match(md, new RegExp(`^\\| ${endpoints} \\| ${side} \\| \\d+ \\| [\\d.]+ \\| \\d+ \\| \\d+ \\| \\d+ \\| \\d+ \\|$`, 'm'), `${side}, ${endpoints} endpoint(s)`)
    }
  }
  t.match(md, /In-memory queue stub \(NOT a real-Redis figure\)/)
  t.match(md, /Anvil 0\.1 published \(stub, generator in-process\)/)

  const report = JSON.parse(readFileSync(out + '.json', 'utf8'))
  t.match(report.machine, { cpu: String, cores: Number, node: String, redis: String, commit: String })
  t.same(report.failed, [])
  const spread = { median: Number, min: Number, max: Number, runs: Number }
  const { ingress, verify, drain, e2e, memory, profile } = report.sections

  t.same(ingress.results.map((r: { server: string }) => r.server).sort(), ['anvil', 'anvil-plugin', 'anvil-stub', 'ceiling', 'floor'])
  for (const row of ingress.results) t.match(row, { rps: spread, p50: spread, p99: spread, p999: spread, serverUs: spread, redisUs: spread, generatorUs: spread, xFloor: spread, errors: 0 }, row.server)
  t.same(ingress.results.find((r: { server: string }) => r.server === 'floor').xFloor, { median: 1, min: 1, max: 1, runs: 1 }, 'the floor against itself')
  t.match(md, /\| ingress, anvil, unique, 10 conns \| .* \| × floor \d+\.\d\d \(paired runs\)/, 'the summary gives the paired ratio')

  t.same(verify.rows.map((r: { preset: string }) => r.preset), ['raw crypto HMAC', ...PROVIDER_NAMES])
  for (const row of verify.rows.slice(1)) t.match(row, { valid: spread, forgedEarly: spread, forgedLate: spread, lateMinusEarly: spread, forgedMinusValid: spread }, row.preset)

  t.same(drain.rows.map((r: { concurrency: number }) => r.concurrency), [1, 10, 50])
  for (const row of drain.rows) t.match(row, { anvil: spread, raw: spread, ratio: spread })

  t.match(e2e, { achievedRate: spread, e2e: { p50: spread, p99: spread, p999: spread }, request: { p50: spread, p99: spread, p999: spread } })
  t.equal(e2e.lost, 0, 'every accepted event reached the handler')
  t.equal(e2e.accepted, e2e.sent, 'every request was accepted')

  t.match(memory, { fillingBytes: spread, steadyBytes: spread, completedKept: Number, dedupeKeys: Number })

  const outbound = report.sections['outbound-delivery']
  t.same(outbound.rows.map((r: { endpoints: number }) => r.endpoints), [1, 10])
  for (const row of outbound.rows) t.match(row, { anvil: spread, floor: spread, ratio: spread, anvilCpu: spread, floorCpu: spread, cpuRatio: spread })
  t.same(outbound.logRows.map((r: { side: string }) => r.side), [1, 10].flatMap(() => ['anvil', 'anvil-log', 'graphile', 'graphile-batched']))
  t.match(md, /\| outbound delivery with the delivery log, \d+ endpoint\(s\) \| .* \| anvil-log \/ graphile-worker batched [\d.]+/)
  const publish = report.sections['outbound-publish']
  t.match(publish, { row: { anvil: spread, floor: spread, ratio: spread, anvilCpu: spread, floorCpu: spread, cpuRatio: spread }, latency: { total: Number, delivered: Number, p50: Number, p99: Number } })
  t.equal(publish.latency.delivered, publish.latency.total, 'every published message reached the receiver')
  t.match(md, /\| outbound publish in a transaction \| .* \| anvil \/ bare INSERT [\d.]+/)

  t.ok(Object.keys(profile.areas).length > 0, 'the profile has areas')
  t.ok(profile.top.length > 0, 'the profile has top functions')
})

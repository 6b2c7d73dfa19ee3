// `npm run bench`: every benchmark, each in its own process one after the other, into one report:
// bench/report-latest.md (and .json, not committed) with the machine, each figure's spread over repeated runs,
// and the ratios. Run it on a quiet machine; each bench also runs alone (`node bench/<name>.mjs`).
// Usage: node bench/run.mjs [--quick] [--only ingress,verify,drain,e2e,memory,outbound-delivery,outbound-publish,profile] [--profile]
//   [--out bench/report-latest]
//   --quick    a tiny load per bench: shows they run (test/bench-smoke.test.ts), the figures mean nothing
//   --profile  also the CPU profile of the ingress (off by default: the profiler slows what it watches)
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkedArgs, machine, machineLine, showSpread, tempDir, track } from './lib.mjs'

const values = checkedArgs({
  quick: { type: 'boolean', default: false },
  only: { type: 'string' },
  profile: { type: 'boolean', default: false },
  out: { type: 'string', default: new URL('./report-latest', import.meta.url).pathname }
})
const BENCHES = ['ingress', 'verify', 'drain', 'e2e', 'memory', 'outbound-delivery', 'outbound-publish', 'profile']
const chosen = values.only !== undefined ? values.only.split(',') : BENCHES.filter((id) => id !== 'profile' || values.profile)
const unknown = chosen.filter((id) => !BENCHES.includes(id))
if (unknown.length > 0) {
  console.error(`bench/run.mjs: --only takes names from ${BENCHES.join(', ')}; got ${unknown.join(', ')}`)
  process.exit(2)
}

const dir = tempDir('anvil-bench-run-')
const sections = []
const failed = []
for (const id of chosen) {
  const sectionFile = join(dir, `${id}.json`)
  const args = [new URL(`./${id}.mjs`, import.meta.url).pathname, '--section-out', sectionFile, ...(values.quick ? ['--quick'] : [])]
  console.error(`bench: ${id}${values.quick ? ' (quick)' : ''}`)
  const child = track(spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] }), 'SIGTERM')
  const startedAt = Date.now()
  const code = await new Promise((resolve) => child.once('exit', (status, signal) => resolve(status ?? signal)))
  console.error(`bench: ${id} took ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
  let section
  try { section = JSON.parse(readFileSync(sectionFile, 'utf8')) } catch {}
  // A bench that finished its figures but exits non-zero (e2e when events were lost) keeps its section.
  if (section !== undefined) sections.push(section)
  if (code !== 0) failed.push(`${id} (exit ${code})`)
}

/** The ratios the issue asks for, gathered from the sections' data. */
function summary () {
  const lines = []
  const of = (id) => sections.find((s) => s.id === id)?.data
  const ingress = of('ingress')
  if (ingress !== undefined) {
    const rows = ingress.results
    for (const r of rows.filter((r) => r.mix === 'unique' && (r.server === 'anvil' || r.server === 'anvil-plugin'))) {
      const floor = rows.find((f) => f.server === 'floor' && f.mix === r.mix && f.connections === r.connections)
      const ceiling = rows.find((f) => f.server === 'ceiling' && f.mix === r.mix && f.connections === r.connections)
      const ratio = (other) => other === undefined ? '–' : (r.rps.median / other.rps.median).toFixed(2)
      const xFloor = r.xFloor === undefined ? '–' : showSpread(r.xFloor, 2)
      lines.push(`| ingress, ${r.server}, unique, ${r.connections} conns | ${showSpread(r.rps)} req/s, p99 ${r.p99.median} ms (floor ${floor?.p99.median ?? '–'}) | × floor ${xFloor} (paired runs), × ceiling ${ratio(ceiling)} (medians) |`)
    }
    for (const r of rows.filter((r) => r.server === 'anvil-stub')) {
      lines.push(`| ingress, in-memory queue stub (not Redis), ${r.connections} conns | ${showSpread(r.rps)} req/s | × Anvil 0.1's published ${ingress.published.rps} (generator in-process there): ${(r.rps.median / ingress.published.rps).toFixed(2)} |`)
    }
  }
  const verify = of('verify')
  if (verify !== undefined) {
    const raw = verify.rows.find((r) => r.preset === 'raw crypto HMAC')
    const anvil = verify.rows.find((r) => r.preset === 'anvil')
    if (raw !== undefined && anvil !== undefined) lines.push(`| verify, anvil preset | ${showSpread(anvil.valid)} ns/call | × raw crypto HMAC ${(anvil.valid.median / raw.valid.median).toFixed(2)} |`)
  }
  for (const r of of('drain')?.rows ?? []) {
    lines.push(`| drain, concurrency ${r.concurrency} | ${showSpread(r.anvil)} jobs/s | anvil / raw BullMQ ${showSpread(r.ratio, 2)} (target ≥ 0.9) |`)
  }
  const e2e = of('e2e')
  if (e2e !== undefined) {
    lines.push(`| end to end at ${e2e.rate}/s, send → handler start | p50 ${showSpread(e2e.e2e.p50, 2)} ms, p99 ${showSpread(e2e.e2e.p99, 2)} ms | lost ${e2e.lost} |`)
  }
  const memory = of('memory')
  if (memory !== undefined) lines.push(`| Redis memory, steady state | ${showSpread(memory.steadyBytes)} bytes/event | |`)
  for (const r of of('outbound-delivery')?.rows ?? []) {
    lines.push(`| outbound delivery, ${r.endpoints} endpoint(s) | ${showSpread(r.anvil)} deliveries/s | anvil / raw BullMQ + undici ${showSpread(r.ratio, 2)} (target ≥ 0.9) |`)
  }
  for (const r of (of('outbound-delivery')?.logRows ?? []).filter((r) => r.side === 'anvil-log' && r.ratio !== undefined)) {
    lines.push(`| outbound delivery with the delivery log, ${r.endpoints} endpoint(s) | ${showSpread(r.rate)} deliveries/s, ${showSpread(r.cpu.total)} µs CPU each (node, Redis, PostgreSQL) | anvil-log / graphile-worker batched ${showSpread(r.ratio, 2)} (target ≥ 1.0) |`)
  }
  const publish = of('outbound-publish')
  if (publish !== undefined) {
    lines.push(`| outbound publish in a transaction | ${showSpread(publish.row.anvil)} messages/s | anvil / bare INSERT ${showSpread(publish.row.ratio, 2)} (target ≥ 0.8) |`)
    lines.push(`| outbound publish → receiver at ${publish.rate}/s | p50 ${publish.latency.p50?.toFixed(1)} ms, p99 ${publish.latency.p99?.toFixed(1)} ms | delivered ${publish.latency.delivered}/${publish.latency.total} |`)
  }
  return lines.length === 0 ? [] : ['## Summary', '', '| what | figure | ratio |', '|---|---|---|', ...lines, '']
}

const env = machine()
const markdown = [
  '# Benchmarks', '',
  machineLine(env),
  `\`node bench/run.mjs${values.quick ? ' --quick' : ''}${values.only !== undefined ? ` --only ${values.only}` : ''}${values.profile ? ' --profile' : ''}\`: each bench in its own process, one after the other; every server, generator and`,
  'redis-server in its own process on loopback. Figures are median [min–max] over the repeated runs each section names.',
  ...(values.quick ? ['', '**Quick run: tiny loads that only show the benches run. These figures mean nothing.**'] : []),
  ...(failed.length > 0 ? ['', `**Failed: ${failed.join(', ')}.**`] : []),
  '',
  ...summary(),
  ...sections.flatMap((s) => [`## ${s.title}`, '', ...s.markdown, ''])
]
writeFileSync(values.out + '.md', markdown.join('\n'))
writeFileSync(values.out + '.json', JSON.stringify({ machine: env, quick: values.quick, failed, sections: Object.fromEntries(sections.map((s) => [s.id, s.data])) }, null, 2) + '\n')
console.log(markdown.join('\n'))
if (failed.length > 0) process.exitCode = 1

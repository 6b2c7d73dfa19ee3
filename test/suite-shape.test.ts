/**
 * The suite's own rules (CONTRIBUTING.md, "How tests get …"): a test file's setup runs in `beforeAll` or
 * `beforeStep` (test/helpers/before-all.ts, on tap's `t.before`), never as a top-level `await`, so a failing
 * setup is a failing test with its source; and no test picks a free port for a process to bind later, which
 * another process could take first: CLIs take port 0 and report the port they bound. Files are read with
 * TypeScript's parser.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { ROOT } from './helpers/root.js'

const files = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((file) => /\.(ts|mjs)$/.test(file) && !file.startsWith('types/') && !file.startsWith('fixtures/'))
  .map((file) => join('test', file))

/** The `await`s of a file outside every function (its top level), by line; `await import()` alone is let be. */
function topLevelAwaits (file: string, text = readFileSync(join(ROOT, file), 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) return
    const awaited = ts.isAwaitExpression(node)
      ? node.expression
      : ts.isForOfStatement(node) && node.awaitModifier !== undefined ? node.expression : undefined
    if (awaited !== undefined && !(ts.isCallExpression(awaited) && awaited.expression.kind === ts.SyntaxKind.ImportKeyword)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line
      found.push(`${file}:${line + 1}: ${text.split('\n')[line]?.trim() ?? ''}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

t.test('no test file or helper awaits at its top level: setup runs in t.before, where a failure is a failing test', async (t) => {
  t.ok(files.length > 100, `${files.length} files read`)
  t.same(files.flatMap((file) => topLevelAwaits(file)), [])
})

t.test('setup goes through beforeAll or beforeStep, not t.before, whose error tap drops when another before runs', async (t) => {
  const raw = files.filter((file) => file !== join('test', 'helpers', 'before-all.ts'))
    .flatMap((file) => readFileSync(join(ROOT, file), 'utf8').split('\n').map((line, i) => [file, i + 1, line] as const))
    .filter(([, , line]) => /\bt\.before\(/.test(line))
    .map(([file, line]) => `${file}:${line}`)
  t.same(raw, [])
})

/** The test files' folders, one per area (CONTRIBUTING.md, "Layout"); the top of test/ keeps at most MAX_TOP files. */
const AREAS = ['admin', 'cli', 'cluster', 'console', 'docs', 'faults', 'handlers', 'inbound', 'journal', 'ops', 'outbound', 'portal', 'providers', 'tenants', 'testing']
const MAX_TOP = 40

t.test(`test files lie in their area's folder: at most ${MAX_TOP} at the top of test/, no other folder`, async (t) => {
  const tests = files.filter((file) => file.endsWith('.test.ts'))
  const top = tests.filter((file) => file.split('/').length === 2)
  t.ok(top.length <= MAX_TOP, `${top.length} files at the top of test/: put a new one in its area's folder`)
  t.same(tests.filter((file) => file.split('/').length > 2 && !AREAS.includes(file.split('/')[1] ?? '')), [], `the areas: ${AREAS.join(', ')}`)
})

t.test('one wait on a state: eventually(what, check, ms) of test/helpers/eventually.ts, and no other polling helper', async (t) => {
  const others = files.filter((file) => file !== join('test', 'helpers', 'eventually.ts'))
    .filter((file) => /\b(function|const)\s+(waitFor|eventually|waitUntil|until|poll)\b/.test(readFileSync(join(ROOT, file), 'utf8')))
  t.same(others, [], 'import { eventually } from test/helpers/eventually.ts instead')
})

t.test('no pool per query: a query goes through TestDatabase.query (one small pool per file) or a pool made once', async (t) => {
  // A new pool per query, in a check that eventually polls, opened hundreds of connections on the
  // PostgreSQL the whole suite shares (max_connections 100), and "sorry, too many clients already" beside it.
  const raw = files.flatMap((file) => readFileSync(join(ROOT, file), 'utf8').split('\n').map((line, i) => [file, i + 1, line] as const))
    .filter(([, , line]) => /\.pool\(\d*\)\.query\b/.test(line))
    .map(([file, line]) => `${file}:${line}`)
  t.same(raw, [])
})

t.test('the check sees a top-level await, and lets one inside a function, and await import(), be', async (t) => {
  t.equal(topLevelAwaits('probe.ts', 'const redis = await TestRedis.start()').length, 1)
  t.equal(topLevelAwaits('probe.ts', 'for await (const line of lines) {}').length, 1)
  t.equal(topLevelAwaits('probe.ts', 'beforeStep(t, async () => { redis = await TestRedis.start() })').length, 0)
  t.equal(topLevelAwaits('probe.ts', "const { x } = await import('./x.js')").length, 0)
})

/**
 * The files that may pick a free port, and why none of them is a pick-then-spawn race: each either verifies
 * that the process answering on the port is the one it started and tries another port if not, or wants a port
 * where nothing listens (a refused connection) and starts nothing there.
 */
const MAY_PICK_A_PORT: Record<string, string> = {
  'test/helpers/redis.ts': 'redis-server cannot take port 0: ownServerAnswers checks its pid, and another port is tried',
  'test/helpers/cluster.ts': 'the same, for each node of the cluster',
  'cli/dev-redis.ts': 'the same, for `anvil dev`\'s private redis-server (startPrivateRedis)',
  'test/cli/dev.test.ts': 'a probe URL where nothing answers, so that `anvil dev` starts its own redis-server (which checks its pid)',
  'test/cli/worker.test.ts': 'a REDIS_URL where nothing answers',
  'test/cli/send.test.ts': 'a URL where nothing answers (ECONNREFUSED)'
}

t.test('no new caller picks a free port: a process binds port 0 and reports the port it got', async (t) => {
  const sources = [...files, ...readdirSync(join(ROOT, 'cli'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join('cli', f))]
  const pickers = sources.filter((file) => /\b(freePort|stablePort)\s*\(/.test(readFileSync(join(ROOT, file), 'utf8').replace(/\bfunction (freePort|stablePort)\b/g, '')))
  t.same(pickers.filter((file) => MAY_PICK_A_PORT[file] === undefined), [],
    'pass port 0 (PORT=0, --port 0) and read the bound port: cli.listeningPort(msg), or cli.boundPort() when nothing is logged')
  t.same(Object.keys(MAY_PICK_A_PORT).filter((file) => !pickers.includes(file)), [], 'each file listed still picks one (else drop it from the list)')
})

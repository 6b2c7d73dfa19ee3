/**
 * `--handler ./handler.ts`: `anvil dev` (and `anvil worker`, through the same loader) runs a TypeScript handler
 * with tsx when tsx is installed, and otherwise refuses it in one line that says how. tsx is not among this
 * checkout's packages, so here the refusal runs; the branch with tsx runs where it is installed.
 */
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ROOT, runCli, sendPrinted, startCli, tempDir } from './helpers/cli.js'
import { freePort, TestRedis } from './helpers/redis.js'

const HAS_TSX = (() => {
  try {
    createRequire(join(ROOT, 'package.json')).resolve('tsx/esm/api')
    return true
  } catch {
    return false
  }
})()

t.test('dev --handler ./handler.ts: run with tsx when it is installed, else one line on how', async (t) => {
  const cwd = tempDir(t)
  writeFileSync(join(cwd, 'handler.ts'), 'export default async function handler (event: { eventId?: string }): Promise<void> {\n  console.log(`typed ${event.eventId ?? \'\'}`)\n}\n')
  if (!HAS_TSX) {
    const result = await runCli(['dev', '--handler', './handler.ts'], { cwd, env: { REDIS_URL: 'redis://127.0.0.1:1' } })
    t.equal(result.code, 1)
    t.equal(result.stderr, `anvil: invalid configuration: --handler ./handler.ts is TypeScript, which Node ${process.version} cannot load alone: ` +
      'install tsx (npm install --save-dev tsx) and run again, or give the compiled .js\n')
    return
  }
  const redis = await TestRedis.start()
  t.teardown(async () => await redis.stop())
  const port = await freePort()
  const cli = startCli(t, ['dev', '--handler', './handler.ts', '--port', String(port)], { cwd, env: { REDIS_URL: redis.url, ANVIL_QUEUE: 'cli-dev-ts' } })
  await cli.log('anvil dev: listening', { port, handler: './handler.ts' })
  t.equal((await sendPrinted((await cli.line((line) => line.startsWith('  curl '))).trim())).status, 202)
  await cli.line((line) => line.startsWith('typed evt_'))
  t.equal(await cli.stop('SIGTERM'), 0)
})

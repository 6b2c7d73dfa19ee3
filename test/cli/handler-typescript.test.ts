/**
 * `--handler ./handler.ts`: `anvil dev` (and `anvil worker`, through the same loader) runs a TypeScript handler
 * with the tsx of the user's project, and without it refuses in one line that says how (Node 20 strips no types).
 */
import t, { type Test } from 'tap'
import { symlinkSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, runCli, sendPrinted, startCli, tempDir } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'

function project (t: Test, withTsx: boolean): string {
  const cwd = tempDir(t)
  writeFileSync(join(cwd, 'package.json'), '{ "type": "module" }\n')
  writeFileSync(join(cwd, 'handler.ts'), 'export default async function handler (event: { id: string }): Promise<void> {\n  const id: string = event.id\n  console.log(`typed ${id}`)\n}\n')
  if (withTsx) {
    mkdirSync(join(cwd, 'node_modules'))
    symlinkSync(join(ROOT, 'node_modules', 'tsx'), join(cwd, 'node_modules', 'tsx'))
  }
  return cwd
}

t.test('dev --handler ./handler.ts without tsx in the project: one line on how', async (t) => {
  const result = await runCli(['dev', '--handler', './handler.ts'], { cwd: project(t, false), env: { REDIS_URL: 'redis://127.0.0.1:1' } })
  t.equal(result.code, 1)
  t.equal(result.stderr, `anvil: invalid configuration: --handler ./handler.ts is TypeScript, which Node ${process.version} cannot load alone: ` +
    'install tsx (npm install --save-dev tsx) and run again, or give the compiled .js\n')
})

t.test('dev --handler ./handler.ts with tsx installed in the project: the handler runs', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(async () => await redis.stop())
  const cli = startCli(t, ['dev', '--handler', './handler.ts', '--port', '0'], { cwd: project(t, true), env: { REDIS_URL: redis.url, ANVIL_QUEUE: 'cli-dev-ts' } })
  await cli.log('anvil dev: listening', { handler: './handler.ts' })
  t.equal((await sendPrinted((await cli.line((line) => line.startsWith('  curl '))).trim())).status, 202)
  await cli.line((line) => line.startsWith('typed e_'))
  t.equal(await cli.stop('SIGTERM'), 0)
})

#!/usr/bin/env node
/**
 * Finishes dist/ after tsc (`npm run build`): the CLI is executable and the hand-written peer-types.d.ts is
 * beside its module. `--from build` first copies the sources' output out of build/: `npm test` compiles them
 * once, with the tests (tsconfig.test.json), and tsconfig.build.json would emit the same bytes (26 CPU-s).
 */
import { chmodSync, cpSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')

if (process.argv[2] === '--from' && process.argv[3] === 'build') {
  // What tsconfig.build.json compiles: its folders whole, and index.ts as its three outputs.
  const { include } = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8'))
  const outputs = include.flatMap((entry) => entry.endsWith('.ts')
    ? ['.js', '.js.map', '.d.ts'].map((ext) => entry.replace(/\.ts$/, ext))
    : [entry])
  for (const output of outputs) {
    rmSync(join(dist, output), { recursive: true, force: true })
    cpSync(join(root, 'build', output), join(dist, output), { recursive: true })
  }
} else if (process.argv.length > 2) {
  console.error(`usage: node scripts/dist.mjs [--from build] (got ${process.argv.slice(2).join(' ')})`)
  process.exit(2)
}
chmodSync(join(dist, 'cli/anvil.js'), 0o755)
cpSync(join(root, 'src/handlers/peer-types.d.ts'), join(dist, 'src/handlers/peer-types.d.ts'))

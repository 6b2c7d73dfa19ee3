#!/usr/bin/env node
// `npm run screenshots`: regenerates docs/images/, the pictures of docs/console.md, docs/portal.md and the README.
// It builds the package and the tests, then runs the tests that take them with ANVIL_SCREENSHOTS=1: each page of
// the console and the portal at 1280 px in light (test/helpers/visual.ts lists the pages), and the portal framed in
// a host page (test/portal/frame.test.ts). Each PNG is then reduced with pngquant when it is installed
// (`apt-get install pngquant`). Needs what the tests need: redis-server, PostgreSQL, Chromium (CONTRIBUTING.md).
// test/docs/screenshots.test.ts holds that every page has its picture here and every picture the docs show exists.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/** The test files that take the docs' pictures (as TypeScript sources; run compiled from build/). */
const SHOT_TESTS = ['test/console/visual.test.ts', 'test/portal/visual.test.ts', 'test/portal/frame.test.ts']

const root = join(import.meta.dirname, '..')
const run = (command, args, env = {}) => {
  const { status } = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } })
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${status}`)
}

run('npm', ['run', 'build'])
run('npm', ['run', 'build:tests'])
run('npx', ['tap', '--disable-coverage', '--jobs', '1', ...SHOT_TESTS.map((file) => join('build', file.replace(/\.ts$/, '.js')))], { ANVIL_SCREENSHOTS: '1' })
const images = join(root, 'docs', 'images')
const pngs = readdirSync(images).filter((name) => name.endsWith('.png')).map((name) => join(images, name))
if (spawnSync('pngquant', ['--version']).status === 0) {
  // Exit 99: the reduced file would be larger or worse than allowed, and the original stays.
  const { status } = spawnSync('pngquant', ['--force', '--skip-if-larger', '--ext', '.png', '--quality', '65-90', ...pngs], { stdio: 'inherit' })
  if (status !== 0 && status !== 99) throw new Error(`pngquant exited ${status}`)
} else {
  console.log('pngquant is not installed: the pictures stay as Chromium wrote them (larger)')
}
console.log(`docs/images: ${pngs.length} pictures`)

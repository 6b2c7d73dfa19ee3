/**
 * A consumer project, for compiling an app against the package's declarations as a user installs them: its
 * node_modules holds only what `npm install @anvil/fastify` would (the lockfile's packages not marked
 * `dev`, linked from this repository), so a type the package needs but ships only as a devDependency is
 * missing here as it would be there.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT } from './root.js'

const run = promisify(execFile)
export { ROOT }

/** The top-level packages of a production install: the lockfile's `node_modules/<name>` entries not marked `dev`. */
export function productionPackages (): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> }
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith('node_modules/') && !path.slice('node_modules/'.length).includes('node_modules/') && entry.dev !== true)
    .map(([path]) => path.slice('node_modules/'.length))
}

export interface Consumer {
  dir: string
  /** Compiles `file` with tsc (strict, NodeNext, `skipLibCheck` as given): its exit code and output. */
  tsc: (file: string, skipLibCheck?: boolean, cwd?: string) => Promise<{ code: number, output: string }>
  cleanup: () => void
}

/** An ESM project in a temporary directory with the production packages linked and `@types/node` (the app's own). */
export function consumerProject (prefix: string): Consumer {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }')
  const link = (name: string): void => {
    mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name), 'dir')
  }
  for (const name of new Set([...productionPackages(), '@types/node'])) link(name)
  const tsc = async (file: string, skipLibCheck = false, cwd = dir): Promise<{ code: number, output: string }> => {
    const name = `tsconfig.${file}.json`
    writeFileSync(join(cwd, name), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck, types: ['node'] },
      files: [file]
    }))
    try {
      const { stdout } = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', name], { cwd })
      return { code: 0, output: stdout }
    } catch (err) {
      const { code, stdout } = err as { code: number, stdout: string }
      return { code, output: stdout }
    }
  }
  return { dir, tsc, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

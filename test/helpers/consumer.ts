/**
 * A consumer project, for compiling an app against the package's declarations as a user installs them: its
 * node_modules holds only what `npm install @anvil/fastify` would (the lockfile's packages not marked
 * `dev`, linked from this repository), so a type the package needs but ships only as a devDependency is
 * missing here as it would be there.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import { ROOT } from './root.js'

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
  /**
   * Type-checks `files` (in `cwd`) as one program, as `tsc -p` does with a tsconfig of strict, NodeNext and
   * `skipLibCheck` as given: its errors as tsc prints them (`app.ts(3,7): error TS2322: …`), paths from `cwd`.
   */
  compile: (files: string[], skipLibCheck?: boolean, cwd?: string) => string[]
  cleanup: () => void
}

// Parsed and bound declaration files (never an app's own .ts, which a test may rewrite), shared by the programs of
// one test process as TypeScript's language service shares them: each program checks on its own, parses once.
const parsed = new Map<string, ts.SourceFile | undefined>()

/** An ESM project in a temporary directory with the production packages linked and `@types/node` (the app's own). */
export function consumerProject (prefix: string): Consumer {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }')
  const link = (name: string): void => {
    mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name), 'dir')
  }
  for (const name of new Set([...productionPackages(), '@types/node'])) link(name)
  const compile = (files: string[], skipLibCheck = false, cwd = dir): string[] => {
    const tsconfig = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck, types: ['node'] }
    const { options, errors } = ts.convertCompilerOptionsFromJson(tsconfig, cwd)
    if (errors.length > 0) throw new Error(ts.flattenDiagnosticMessageText(errors[0]?.messageText, '\n'))
    const host = ts.createCompilerHost(options)
    const read = host.getSourceFile.bind(host)
    host.getCurrentDirectory = () => cwd
    host.getSourceFile = (name, language, ...rest) => {
      if (!/\.d\.[cm]?ts$/.test(name)) return read(name, language, ...rest)
      const key = `${name} ${JSON.stringify(language)}`
      if (!parsed.has(key)) parsed.set(key, read(name, language, ...rest))
      return parsed.get(key)
    }
    const program = ts.createProgram(files.map((file) => join(cwd, file)), options, host)
    const format = { getCanonicalFileName: (name: string) => name, getCurrentDirectory: () => cwd, getNewLine: () => '\n' }
    return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.formatDiagnostic(diagnostic, format).trim())
  }
  return { dir, compile, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

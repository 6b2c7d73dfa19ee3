/**
 * The shape of the code (STYLE.md): no import cycle among index.ts, src/, plugins/, cli/ and the entries replay/ and testing/; src/ is the
 * framework-free core and imports no Fastify; no file in src/ is past 300 lines, and no folder of src/ holds more
 * than 16 files (a concern per folder: one that grows past it is two). Imports are read with
 * TypeScript's own pre-processor, so `import type`, `export … from` and dynamic `import()` all count.
 */
import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from './helpers/root.js'
import ts from 'typescript'

const DIRS = ['src', 'plugins', 'cli', 'replay', 'testing']
const MAX_LINES = 300
const MAX_FILES_PER_FOLDER = 16
/** Fastify itself, its plugin helper and its ecosystem; `@fastify/error` alone is framework-free (the errors registry). */
const FRAMEWORK = /^(fastify|fastify-plugin|@fastify\/(?!error$)[^/]+)(\/|$)/

function sources (dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file))
}

const files = ['index.ts', ...DIRS.flatMap(sources)]
const imports = new Map<string, { relative: string[], packages: string[] }>()
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true)
  const specifiers = importedFiles.map((imported) => imported.fileName)
  imports.set(file, {
    relative: specifiers.filter((s) => s.startsWith('.'))
      .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).replace(/\.js$/, '.ts'))
      // A hand-written declaration file (src/handlers/peer-types.d.ts) is imported by its .js name too.
      .map((target) => existsSync(join(ROOT, target)) ? target : target.replace(/\.ts$/, '.d.ts')),
    packages: specifiers.filter((s) => !s.startsWith('.'))
  })
}

t.test('every relative import into the tree names one of its files (so the walk below sees every edge)', async (t) => {
  const unknown = [...imports].flatMap(([file, { relative: targets }]) => targets
    .filter((target) => DIRS.some((dir) => target.startsWith(dir + '/')) && !imports.has(target))
    .map((target) => `${file} → ${target}`))
  t.same(unknown, [])
  t.ok(imports.size > 50, `${imports.size} files read`)
})

t.test('no import cycle among index.ts, src/, plugins/, cli/, replay/ and testing/', async (t) => {
  // Depth-first, with the path on the stack: a back edge is a cycle, reported as the files around it.
  const state = new Map<string, 'open' | 'done'>()
  const cycles: string[] = []
  const visit = (file: string, path: string[]): void => {
    state.set(file, 'open')
    for (const next of imports.get(file)?.relative ?? []) {
      if (!imports.has(next)) continue
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), file, next].join(' → '))
      else if (state.get(next) === undefined) visit(next, [...path, file])
    }
    state.set(file, 'done')
  }
  for (const file of imports.keys()) if (state.get(file) === undefined) visit(file, [])
  t.same(cycles, [], 'import cycles')
})

t.test('src/ imports no Fastify: the core works without the framework', async (t) => {
  const offenders = [...imports].filter(([file]) => file.startsWith('src/'))
    .flatMap(([file, { packages }]) => packages.filter((name) => FRAMEWORK.test(name)).map((name) => `${file} imports ${name}`))
  t.same(offenders, [])
})

t.test(`no file in src/ is past ${MAX_LINES} lines`, async (t) => {
  const long = files.filter((file) => file.startsWith('src/'))
    .map((file) => [file, readFileSync(join(ROOT, file), 'utf8').split('\n').length] as const)
    .filter(([, lines]) => lines > MAX_LINES)
    .map(([file, lines]) => `${file}: ${lines} lines`)
  t.same(long, [])
})

t.test(`no folder of src/ holds more than ${MAX_FILES_PER_FOLDER} files`, async (t) => {
  const folders = readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory()).map((entry) => join(entry.parentPath, entry.name))
  const crowded = [join(ROOT, 'src'), ...folders]
    .map((dir) => [relative(ROOT, dir), readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile()).length] as const)
    .filter(([, count]) => count > MAX_FILES_PER_FOLDER)
    .map(([dir, count]) => `${dir}: ${count} files`)
  t.ok(folders.length > 10, `${folders.length} folders read`)
  t.same(crowded, [])
})

/** Folders with one entry: the rest of the folder is theirs, and nothing outside imports it. */
const ENTRIES: Record<string, string> = { 'src/resend/': 'src/resend/resender.ts' }

t.test('a folder with one entry is imported through it alone', async (t) => {
  const around = Object.entries(ENTRIES).flatMap(([folder, entry]) => [...imports]
    .filter(([file]) => !file.startsWith(folder))
    .flatMap(([file, { relative: targets }]) => targets.filter((target) => target.startsWith(folder) && target !== entry).map((target) => `${file} → ${target}`)))
  t.same(around, [], `import ${Object.values(ENTRIES).join(', ')} instead`)
})

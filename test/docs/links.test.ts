/**
 * The docs point at things that exist: every relative link (and its #anchor, in a Markdown file) and every
 * repository path they name (`src/…`, `plugins/…`, `cli/…`, `test/…`, `bench/…`, …). A file that moves
 * without its docs fails here. `<name>` and `*` in a path stand for one path segment.
 */
import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { ROOT } from '../helpers/root.js'

const DOCS = [
  'README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'bench/README.md',
  ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)
]
/** Top-level folders whose paths the docs name; a path inside another one (`dist/src/…`) is not one of ours. */
const PATH = /(?<![\w./@<>*-])(?:src|plugins|cli|test|bench|docs|examples|charts|infra|migrations)\/[\w./<>*-]*/g
const SKIPPED = new Set(['node_modules', 'dist', 'build', '.git', '.tap', 'coverage'])

/** Every file and folder of the repository, relative to its root, folders with a trailing slash. */
function walk (dir = ROOT, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue
    const path = relative(ROOT, join(dir, entry.name))
    if (entry.isDirectory()) {
      found.push(path + '/')
      walk(join(dir, entry.name), found)
    } else {
      found.push(path)
    }
  }
  return found
}
const FILES = walk()

/** The lines outside fenced code blocks, and all lines. */
function split (markdown: string): { prose: string, all: string } {
  let fenced = false
  const prose: string[] = []
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    else if (!fenced) prose.push(line)
  }
  return { prose: prose.join('\n'), all: markdown }
}

/** GitHub's anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors (markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const [, heading] of split(markdown).prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = (heading as string).trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

function pathExists (path: string): boolean {
  const clean = path.replace(/[.:]+$/, '')
  if (!/[<*]/.test(clean)) return existsSync(join(ROOT, clean))
  const pattern = clean.split(/(<[^>/]*>|\*)/).map((part) =>
    part === '*' ? '[^/]*' : part.startsWith('<') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('')
  const match = new RegExp(`^${pattern}/?$`)
  return FILES.some((file) => match.test(file))
}

for (const doc of DOCS) {
  t.test(doc, async (t) => {
    const text = readFileSync(join(ROOT, doc), 'utf8')
    const { prose, all } = split(text)

    const links = [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string)
      .filter((target) => !/^[a-z]+:/i.test(target))
    for (const link of links) {
      const [file = '', anchor] = link.split('#')
      const target = file === '' ? doc : join(dirname(doc), file)
      if (!existsSync(join(ROOT, target))) {
        t.fail(`${link}: ${target} does not exist`)
        continue
      }
      if (anchor !== undefined && target.endsWith('.md')) {
        t.ok(anchors(readFileSync(join(ROOT, target), 'utf8')).has(anchor), `${link}: ${target} has a heading #${anchor}`)
      } else {
        t.pass(`${link} exists`)
      }
    }

    const paths = new Set([...all.matchAll(PATH)].map((m) => m[0]))
    for (const path of paths) t.ok(pathExists(path), `${path} exists`)
    t.ok(links.length + paths.size > 0, 'the doc was read')
  })
}

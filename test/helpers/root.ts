import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * The repository's root: the nearest folder above this file with a package.json. Found, not counted in
 * `..`s, because the suite also runs compiled, from build/test/ (npm test compiles it once with tsc).
 */
export const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)))
/** The root as a URL, for `new URL('docs/x.md', ROOT_URL)`. */
export const ROOT_URL = pathToFileURL(ROOT)

function findRoot (dir: string): string {
  while (!existsSync(join(dir, 'package.json'))) {
    if (dirname(dir) === dir) throw new Error('no package.json above test/helpers/')
    dir = dirname(dir)
  }
  return dir + '/'
}

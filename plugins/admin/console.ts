import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../src/shared/errors.js'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon'
}

/** The package's root: the nearest folder above this file with a package.json (from src and from dist alike). */
function packageRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

/** Where `npm run build` puts the console (vite, console/vite.config.ts); it ships in the package. */
export const CONSOLE_DIR = join(packageRoot(), 'dist', 'console')

interface Asset { body: Buffer, type: string }

function readAssets (dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>()
  if (!existsSync(join(dir, 'index.html'))) return assets
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const type = TYPES[extname(file)]
    if (type !== undefined) assets.set(file.split('\\').join('/'), { body: readFileSync(join(dir, file)), type })
  }
  return assets
}

/**
 * The console's files under `<prefix>/console/`, read once at start. They hold no data, so they are open (the
 * login page must load); every call they make goes through the guarded API. Hashed asset names are cached for good.
 */
export function consoleRoutes (prefix: string, dir = CONSOLE_DIR) {
  const assets = readAssets(dir)
  return async function anvilConsoleRoutes (admin: FastifyInstance): Promise<void> {
    const open = { anvilPublic: true }
    admin.get('/console', { config: open, schema: { hide: true } }, async (_request, reply) => await reply.redirect(`${prefix}/console/`))
    admin.get('/console/*', { config: open, schema: { hide: true } }, async (request, reply) => {
      const path = (request.params as { '*': string })['*']
      const asset = assets.get(path === '' ? 'index.html' : path)
      if (asset === undefined) {
        throw new errors.NOT_FOUND(assets.size === 0 ? 'the console is not built: run npm run build' : `no console file ${path}`)
      }
      void reply.header('cache-control', path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache')
      return await reply.type(asset.type).send(asset.body)
    })
  }
}

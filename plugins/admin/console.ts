import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyHelmetOptions } from '@fastify/helmet'
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

/** The console runs only its own bundled script and styles, and talks to this origin only. */
export const CONSOLE_CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"]
}

/** The package's root: the nearest folder above this file with a package.json (from src and from dist alike). */
function packageRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

/** Where `npm run build` puts the console and the portal (vite, console/vite.config.ts); it ships in the package. */
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
 * One page of the bundle under `<prefix>/<section>/`: `page` at the root, the shared `assets/` beside it, read
 * once at start. They hold no data, so they are open; every call they make goes through the guarded API.
 * Hashed asset names are cached for good.
 */
function pageRoutes (prefix: string, section: string, page: string, dir: string, helmet?: Omit<FastifyHelmetOptions, 'global'>) {
  const assets = readAssets(dir)
  return async function anvilPageRoutes (admin: FastifyInstance): Promise<void> {
    const open = { anvilPublic: true }
    admin.get(`/${section}`, { config: open, schema: { hide: true } }, async (_request, reply) => await reply.redirect(`${prefix}/${section}/`))
    admin.get(`/${section}/*`, { config: open, schema: { hide: true }, ...(helmet === undefined ? {} : { helmet }) }, async (request, reply) => {
      const path = (request.params as { '*': string })['*']
      const asset = assets.get(path === '' ? page : path)
      if (asset === undefined || (path.endsWith('.html') && path !== page)) {
        throw new errors.NOT_FOUND(assets.size === 0 ? `the ${section} is not built: run npm run build` : `no ${section} file ${path}`)
      }
      void reply.header('cache-control', path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache')
      return await reply.type(asset.type).send(asset.body)
    })
  }
}

/** The console's files under `<prefix>/console/` (the login page must load without the token). */
export function consoleRoutes (prefix: string, dir = CONSOLE_DIR) {
  return pageRoutes(prefix, 'console', 'index.html', dir)
}

/**
 * The tenant portal's page under `<prefix>/portal/`, from the same build. Unlike the console, a product may frame
 * it in its own settings page: `frameAncestors` (CSP source expressions) are the origins allowed to, none by default.
 */
export function portalPageRoutes (prefix: string, frameAncestors: readonly string[] = [], dir = CONSOLE_DIR) {
  const framed = frameAncestors.length > 0
  return pageRoutes(prefix, 'portal', 'portal.html', dir, {
    // A theme's logo may come from the product's own https origin, unknown when the page is served.
    contentSecurityPolicy: {
      useDefaults: false, directives: { ...CONSOLE_CSP, imgSrc: [...CONSOLE_CSP.imgSrc, 'https:'], frameAncestors: framed ? [...frameAncestors] : ["'none'"] }
    },
    // X-Frame-Options cannot name an origin; the CSP's frame-ancestors says who may frame the page.
    ...(framed ? { xFrameOptions: false } : {})
  })
}

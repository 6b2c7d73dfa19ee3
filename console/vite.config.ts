// The console and the tenants' portal: one Preact build with two pages (index.html, portal.html) sharing their
// components, built by `npm run build` into dist/console, which ships in the package. Relative asset paths, so
// it works under any admin prefix; no inline script or style, for the strict CSP.
import { defineConfig, type Plugin } from 'vite'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * The portal's "verify in your code": the receivers' recipes of docs/outgoing-webhooks.md, each found by its first
 * line as test/outbound/verify-docs.test.ts finds and runs it, so the page shows the tested code. Only the blocks
 * are bundled, not the page (whose other examples' imports would read as the bundle's).
 */
const RECIPES = {
  Node: 'verify-webhook.mjs: Node without a package',
  Python: 'verify_webhook.py: Python, standard library only',
  Go: 'verify.go: Go 1.18 or later, standard library only'
}

function verifyRecipes (): Plugin {
  const id = 'virtual:verify-recipes'
  return {
    name: 'anvil-verify-recipes',
    resolveId: (source) => source === id ? `\0${id}` : undefined,
    load (loaded) {
      if (loaded !== `\0${id}`) return undefined
      const page = readFileSync(fileURLToPath(new URL('../docs/outgoing-webhooks.md', import.meta.url)), 'utf8')
      const blocks = [...page.matchAll(/```\w+\n([\s\S]*?)```/g)].map((m) => m[1] as string)
      const recipes = Object.fromEntries(Object.entries(RECIPES).map(([language, firstLine]) => {
        const code = blocks.find((block) => block.split('\n')[0]?.endsWith(firstLine))
        if (code === undefined) throw new Error(`docs/outgoing-webhooks.md has no block starting with ${firstLine}`)
        return [language, code]
      }))
      return `export default ${JSON.stringify(recipes)}`
    }
  }
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  plugins: [verifyRecipes()],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    rollupOptions: {
      input: {
        console: fileURLToPath(new URL('index.html', import.meta.url)),
        portal: fileURLToPath(new URL('portal.html', import.meta.url))
      },
      // What both pages share (Preact, the components): one chunk, named for what it is.
      output: { chunkFileNames: 'assets/shared-[hash].js' }
    }
  }
})

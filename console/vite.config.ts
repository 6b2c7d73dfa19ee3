// The console and the tenants' portal: one Preact build with two pages (index.html, portal.html) sharing their
// components, built by `npm run build` into dist/console, which ships in the package. Relative asset paths, so
// it works under any admin prefix; no inline script or style, for the strict CSP.
import { defineConfig } from 'vite'
import { fileURLToPath } from 'node:url'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
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

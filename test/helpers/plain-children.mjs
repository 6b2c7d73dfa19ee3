/**
 * Loaded into every test process (tap's node-arg in package.json). tap puts its process-info hook into
 * NODE_OPTIONS for coverage, so every node process a test starts (anvil, fixtures, tsc, benches) would load
 * it, at about 0.7 s of CPU each. Without coverage (npm test runs `--disable-coverage`) children go without it.
 */
if (process.env.TAP_DISABLE_COVERAGE === '1' && process.env.NODE_OPTIONS !== undefined) {
  const kept = process.env.NODE_OPTIONS.split(/\s+/).filter((arg) => arg !== '' && !arg.includes('@tapjs/processinfo'))
  if (kept.length === 0) delete process.env.NODE_OPTIONS
  else process.env.NODE_OPTIONS = kept.join(' ')
}

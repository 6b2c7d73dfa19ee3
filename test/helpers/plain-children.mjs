/**
 * Loaded into every test process (tap's node-arg in package.json). tap's process-info hook (for coverage) puts
 * itself into the NODE_OPTIONS of every process a test starts (anvil, fixtures, tsc, benches): an off-thread
 * module loader that doubles a process's start (importing dist/index.js: 1.2 → 2.5 s of CPU). Without coverage
 * (npm test runs `--disable-coverage`) children go without it.
 */
const withoutProcessInfo = (options) => options.split(/\s+/).filter((arg) => arg !== '' && !arg.includes('@tapjs/processinfo')).join(' ')

if (process.env.TAP_DISABLE_COVERAGE === '1') {
  if (process.env.NODE_OPTIONS !== undefined) {
    const kept = withoutProcessInfo(process.env.NODE_OPTIONS)
    if (kept === '') delete process.env.NODE_OPTIONS
    else process.env.NODE_OPTIONS = kept
  }
  // The hook adds itself back at each spawn (a process-on-spawn listener, registered before this file runs): a
  // listener after it takes it out again.
  const spawnHooks = globalThis[Symbol.for('process-on-spawn@*:singletonId')]
  spawnHooks?.listeners.push((child) => {
    if (child.env.NODE_OPTIONS === undefined) return
    const { NODE_OPTIONS: options, ...env } = child.env
    const kept = withoutProcessInfo(options)
    child.env = kept === '' ? env : { ...env, NODE_OPTIONS: kept }
  })
}

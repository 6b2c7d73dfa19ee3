/**
 * Loaded into every test process (tap's node-arg in package.json). A file's setup that throws outside any
 * test (a top-level await: starting Redis, a database) is reported as a failing test with its error and
 * source, instead of only "no tests found". Errors inside a test are left to tap, which reports them there.
 */
import t from 'tap'

process.on('uncaughtExceptionMonitor', (err) => {
  if (!t.occupied) t.threw(err)
})

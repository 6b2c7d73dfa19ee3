/**
 * The admin API's tests (test/admin/plugin.ts, bad-input.ts, session.ts) in one process: each module registers its
 * tests on this file's tap root as it is imported, with its own fixtures. One file instead of three, because each
 * file's own process (tap, then Fastify and Anvil imported again) cost about half its CPU: 11.2 CPU-s for the three, 5.9 for this one.
 * One of them alone: `npx tap build/test/admin/session.js`.
 */
import './bad-input.js'
import './session.js'
import './plugin.js'

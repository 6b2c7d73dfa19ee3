/**
 * Every provider preset's conformance tests (test/providers/<preset>.ts) and the provider examples
 * (test/providers/examples.ts), in one process: each module registers its tests on this file's tap root as it is
 * imported, with its own redis-server. One file instead of fourteen, because each file's own process (tap, then
 * Fastify, BullMQ and Anvil imported again) cost about 3 CPU-s of the 4 a preset took: 54 CPU-s for the fourteen, 9 for this one.
 * One preset alone: `npx tap build/test/providers/stripe.js`.
 */
import './discord.js'
import './examples.js'
import './github.js'
import './gitlab.js'
import './linear.js'
import './paddle.js'
import './sendgrid.js'
import './shopify.js'
import './slack.js'
import './square.js'
import './standard-webhooks.js'
import './stripe.js'
import './twilio.js'
import './zoom.js'

/**
 * The inbound chain's contract files again, on a real 3-master Redis Cluster (test/helpers/target.ts reads
 * ANVIL_TEST_REDIS when first loaded), in one process: each file registers its tests on this file's tap root, with
 * a cluster of its own. One process instead of twelve saves each one's start (node, tap's process-info hook, the
 * imports: about 1.3 CPU-s). One of them alone: `ANVIL_TEST_REDIS=cluster npx tap build/test/inbound/<name>.test.js`.
 */
import t from 'tap'

// Twelve files' time in one process: past tap's 300 s a file on a loaded machine.
t.setTimeout(900_000)
process.env.ANVIL_TEST_REDIS = 'cluster'
const FILES = ['dead-letter', 'dedupe', 'enqueue', 'ingress-parsing', 'ingress', 'job-data', 'replay', 'retention', 'retry', 'signature', 'worker-plugin', 'worker']
for (const name of FILES) await import(`../inbound/${name}.test.js`)

/** inbound/worker.test.ts again, on a real 3-master Redis Cluster (test/helpers/target.ts reads ANVIL_TEST_REDIS when first loaded). */
process.env.ANVIL_TEST_REDIS = 'cluster'
await import('../inbound/worker.test.js')

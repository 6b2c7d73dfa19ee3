/**
 * tap's `after` script (package.json): drops the PostgreSQL templates this run migrated (test/helpers/pg.ts).
 * tap's runner is the parent of this script as of every test file.
 */
import pg from 'pg'
import { TEMPLATE_PREFIX } from './pg.js'

const client = new pg.Client({ connectionString: process.env.ANVIL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' })
await client.connect()
try {
  const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${TEMPLATE_PREFIX}${process.ppid}\\_%`])
  for (const { datname } of rows) {
    const id = pg.escapeIdentifier(datname)
    await client.query(`ALTER DATABASE ${id} WITH IS_TEMPLATE false`)
    await client.query(`DROP DATABASE ${id} WITH (FORCE)`)
  }
} finally {
  await client.end()
}

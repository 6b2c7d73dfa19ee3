import type { DatabaseConfig } from './config/load-database-config.js'
import { migrate } from '../src/db/migrate.js'

/** `anvil migrate`: applies what the database lacks and prints `{ applied, current }` as one JSON line. */
export async function runMigrate (config: DatabaseConfig): Promise<void> {
  const result = await migrate(config.databaseUrl, { schema: config.dbSchema })
  process.stdout.write(JSON.stringify(result) + '\n')
}

import pg from 'pg'

/** A table of Anvil's schema as SQL names it, both parts quoted: `"anvil"."outbox"`. */
export function qualify (schema: string, table: string): string {
  return `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`
}

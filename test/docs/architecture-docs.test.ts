/**
 * docs/architecture.md's data model is the migrations' tables: its mermaid `erDiagram` has an entity for each
 * table a file of migrations/ creates (and the runner's `schema_migrations`; a partition is its table's), and none for a table that no
 * migration creates. A migration that adds a table fails here until the diagram shows it.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { ROOT_URL } from '../helpers/root.js'

const read = (path: string): string => readFileSync(new URL(path, ROOT_URL), 'utf8')

t.test('the erDiagram has one entity per table of migrations/, and no other', async (t) => {
  const sql = readdirSync(new URL('migrations/', ROOT_URL)).filter((file) => file.endsWith('.sql'))
    .map((file) => read(`migrations/${file}`)).join('\n')
  // A partition (`PARTITION OF`) is its table's, not a table of the model.
  const tables = new Set([...sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?\{\{schema\}\}\.(\w+)(?! PARTITION OF)\b/gi)].map((m) => m[1] as string))
  tables.add('schema_migrations')

  const diagram = /```mermaid\nerDiagram\n([\s\S]*?)```/.exec(read('docs/architecture.md'))?.[1]
  t.ok(diagram, 'docs/architecture.md has a mermaid erDiagram')
  const entities = new Set([...(diagram ?? '').matchAll(/^ {2}(\w+) \{$/gm)].map((m) => m[1] as string))
  t.same([...tables].filter((table) => !entities.has(table)).sort(), [], 'every table is in the diagram')
  t.same([...entities].filter((entity) => !tables.has(entity)).sort(), [], 'every entity is a table')
})

import type pg from 'pg'
import { inTransaction, type Database } from '../db/database.js'
import { decodeCursor } from '../shared/cursor.js'
import { errors } from '../shared/errors.js'
import { compileCheck } from '../shared/validate.js'
import {
  EndpointInputSchema, EndpointPatchSchema, type Endpoint, type EndpointInput, type EndpointPatch, type EndpointWithSecret
} from './endpoint-schemas.js'
import { endpointUrlProblem } from '../delivery/endpoint-url.js'
import { newId, newSecret } from './ids.js'
import { iso, pageSize, toPage, type Page } from './page.js'

export const DEFAULT_SECRET_GRACE_SECONDS = 24 * 60 * 60

export interface EndpointStoreOptions {
  httpsOnly: boolean
  /** When an event map is configured, the public names an endpoint may subscribe to. */
  knownTypes?: ReadonlySet<string>
}

export interface EndpointListQuery {
  tenant?: string
  limit?: number
  cursor?: string
}

interface EndpointRow {
  id: string
  url: string
  tenant: string | null
  event_types: string[]
  description: string
  enabled: boolean
  disabled_reason: string | null
  scheme: Endpoint['scheme']
  rate_limit: number | null
  created_at: Date
  updated_at: Date
  last_delivery_at: Date | null
  last_delivery_status: Endpoint['lastDeliveryStatus']
  failing_since: Date | null
}

const toEndpoint = (row: EndpointRow): Endpoint => ({
  id: row.id,
  url: row.url,
  tenant: row.tenant,
  eventTypes: row.event_types,
  description: row.description,
  enabled: row.enabled,
  disabledReason: row.disabled_reason,
  scheme: row.scheme,
  rateLimit: row.rate_limit,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  lastDeliveryAt: iso(row.last_delivery_at),
  lastDeliveryStatus: row.last_delivery_status,
  failingSince: iso(row.failing_since)
})

const checkInput = compileCheck(EndpointInputSchema)
const checkPatch = compileCheck(EndpointPatchSchema)

export type EndpointStore = ReturnType<typeof createEndpointStore>

/** Endpoints and their secrets. Secrets leave the store only from `create` and `rotateSecret`. */
export function createEndpointStore (db: Database, options: EndpointStoreOptions) {
  const endpoints = db.table('endpoints')
  const secrets = db.table('endpoint_secrets')

  function check (problem: string | undefined, input: { url?: string, eventTypes?: string[] }): void {
    if (problem !== undefined) throw new errors.INVALID_ENDPOINT(problem)
    const urlProblem = input.url === undefined ? undefined : endpointUrlProblem(input.url, { httpsOnly: options.httpsOnly })
    if (urlProblem !== undefined) throw new errors.INVALID_ENDPOINT(`url ${urlProblem}`)
    const unknown = options.knownTypes === undefined ? undefined : input.eventTypes?.find((type) => !options.knownTypes?.has(type))
    if (unknown !== undefined) throw new errors.INVALID_ENDPOINT(`eventTypes: ${JSON.stringify(unknown)} is not a public event type of the event map`)
  }

  async function get (id: string, client: pg.ClientBase | pg.Pool = db.pool): Promise<Endpoint> {
    const { rows } = await client.query<EndpointRow>(`SELECT * FROM ${endpoints} WHERE id = $1`, [id])
    if (rows[0] === undefined) throw new errors.NOT_FOUND(`no endpoint ${id}`)
    return toEndpoint(rows[0])
  }

  return {
    get,

    async create (input: EndpointInput): Promise<EndpointWithSecret> {
      check(checkInput(input), input)
      const id = newId('ep')
      const secret = newSecret()
      return await inTransaction(db.pool, async (client) => {
        const { rows } = await client.query<EndpointRow>(
          `INSERT INTO ${endpoints} (id, url, tenant, event_types, description, enabled, scheme, rate_limit)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
          [id, input.url, input.tenant ?? null, input.eventTypes ?? [], input.description ?? '', input.enabled ?? true,
            input.scheme ?? 'standard-webhooks', input.rateLimit ?? null])
        await client.query(`INSERT INTO ${secrets} (endpoint_id, secret) VALUES ($1, $2)`, [id, secret])
        return { ...toEndpoint(rows[0] as EndpointRow), secret }
      })
    },

    async list (query: EndpointListQuery = {}): Promise<Page<Endpoint>> {
      const limit = pageSize(query.limit)
      const after = query.cursor === undefined ? null : decodeCursor(query.cursor, ['string'])[0]
      const { rows } = await db.pool.query<EndpointRow>(
        `SELECT * FROM ${endpoints} WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR id > $2)
         ORDER BY id LIMIT $3`, [query.tenant ?? null, after, limit + 1])
      return toPage(rows, limit, (row) => [row.id], toEndpoint)
    },

    async update (id: string, patch: EndpointPatch): Promise<Endpoint> {
      check(checkPatch(patch), { url: patch.url, eventTypes: patch.eventTypes })
      const columns: Array<[string, unknown]> = []
      if (patch.url !== undefined) columns.push(['url', patch.url])
      if (patch.tenant !== undefined) columns.push(['tenant', patch.tenant])
      if (patch.eventTypes !== undefined) columns.push(['event_types', patch.eventTypes])
      if (patch.description !== undefined) columns.push(['description', patch.description])
      if (patch.scheme !== undefined) columns.push(['scheme', patch.scheme])
      if (patch.rateLimit !== undefined) columns.push(['rate_limit', patch.rateLimit])
      if (patch.enabled !== undefined) columns.push(['enabled', patch.enabled])
      const sets = columns.map(([name], i) => `${name} = $${i + 2}`)
      // Enabling again starts a clean slate: no reason shown, and a new auto-disable clock.
      if (patch.enabled === true) sets.push('disabled_reason = NULL', 'failing_since = NULL')
      if (patch.enabled === false) sets.push("disabled_reason = coalesce(disabled_reason, 'disabled by an operator')")
      const { rows } = await db.pool.query<EndpointRow>(
        `UPDATE ${endpoints} SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`,
        [id, ...columns.map(([, value]) => value)])
      if (rows[0] === undefined) throw new errors.NOT_FOUND(`no endpoint ${id}`)
      return toEndpoint(rows[0])
    },

    async remove (id: string): Promise<void> {
      const { rowCount } = await db.pool.query(`DELETE FROM ${endpoints} WHERE id = $1`, [id])
      if (rowCount === 0) throw new errors.NOT_FOUND(`no endpoint ${id}`)
    },

    /**
     * A new secret; the ones live now keep signing beside it for `graceSeconds`, so receivers can switch
     * over without a missed delivery. Secrets that expired before are deleted.
     */
    async rotateSecret (id: string, graceSeconds = DEFAULT_SECRET_GRACE_SECONDS): Promise<EndpointWithSecret> {
      if (!Number.isInteger(graceSeconds) || graceSeconds < 0) throw new errors.INVALID_ENDPOINT('graceSeconds must be a whole number >= 0')
      const secret = newSecret()
      return await inTransaction(db.pool, async (client) => {
        const endpoint = await get(id, client)
        await client.query(`DELETE FROM ${secrets} WHERE endpoint_id = $1 AND expires_at <= now()`, [id])
        await client.query(
          `UPDATE ${secrets} SET expires_at = now() + $2 * interval '1 second'
           WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now() + $2 * interval '1 second')`, [id, graceSeconds])
        await client.query(`INSERT INTO ${secrets} (endpoint_id, secret) VALUES ($1, $2)`, [id, secret])
        await client.query(`UPDATE ${endpoints} SET updated_at = now() WHERE id = $1`, [id])
        return { ...endpoint, secret }
      })
    }
  }
}

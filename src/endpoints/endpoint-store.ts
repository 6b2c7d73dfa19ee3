import type pg from 'pg'
import { inTransaction, type Database } from '../db/database.js'
import { decodeCursor } from '../paging/cursor.js'
import { errors } from '../shared/errors.js'
import { compileCheck } from '../shared/validate.js'
import * as secretsSql from '../sql/endpoint-secrets.js'
import * as sql from '../sql/endpoints.js'
import type { EditableColumn, EndpointRow } from '../sql/endpoints.js'
import {
  EndpointInputSchema, EndpointPatchSchema, EndpointShape, type Endpoint, type EndpointInput, type EndpointPatch, type EndpointWithSecret
} from './endpoint-schemas.js'
import { endpointUrlProblem } from './endpoint-url.js'
import { customHeadersProblem, lowerCaseNames, MAX_CUSTOM_HEADERS } from './endpoint-headers.js'
import { newId, newSecret } from '../outbox/ids.js'
import { newEd25519Keys } from '../signing/ed25519.js'
import { TENANT_OPERATIONAL_TYPES } from './operational-events.js'
import { toPage, type Page } from '../paging/page.js'
import { openAtRest, sealAtRest, type EncryptionKeys } from '../at-rest/encryption-keys.js'
import { storedTls } from '../receiver-auth/client-tls.js'
import { storedOAuth } from '../receiver-auth/oauth-client.js'
import { outboundPageSize } from '../paging/outbound-page-size.js'

export const DEFAULT_SECRET_GRACE_SECONDS = 24 * 60 * 60
const SIGNING_RULE = 'signing: ed25519 signs Standard Webhooks deliveries (v1a): scheme must be standard-webhooks'

export interface EndpointStoreOptions {
  httpsOnly: boolean
  /** When an event map is configured, the public names an endpoint may subscribe to. */
  knownTypes?: ReadonlySet<string>
  /** Seal secrets, header values, client keys and OAuth secrets at rest; without, the last two are refused. */
  keys?: EncryptionKeys
}

export interface EndpointListQuery {
  tenant?: string
  limit?: number
  cursor?: string
}

export const toEndpoint = EndpointShape.from

const checkInput = compileCheck(EndpointInputSchema)
const checkPatch = compileCheck(EndpointPatchSchema)

/** Endpoints and their secrets. Secrets leave the store only from `create`, `rotateSecret` and `currentSecret` (a reveal asked for). */
export interface EndpointStore {
  get (id: string, client?: pg.ClientBase | pg.Pool): Promise<Endpoint>
  /**
   * `operational`: an endpoint for Anvil's operational events (src/endpoints/operational-endpoints.ts checked its
   * input). `maxPerTenant`: refused with ENDPOINT_QUOTA when the tenant has that many already (a portal token's create).
   */
  create (input: EndpointInput, options?: { operational?: boolean, maxPerTenant?: number }): Promise<EndpointWithSecret>
  list (query?: EndpointListQuery): Promise<Page<Endpoint>>
  update (id: string, patch: EndpointPatch): Promise<Endpoint>
  remove (id: string): Promise<void>
  /**
   * A new secret; the ones live now keep signing beside it for `graceSeconds`, so receivers can switch
   * over without a missed delivery. Secrets that expired before are deleted.
   */
  rotateSecret (id: string, graceSeconds?: number): Promise<EndpointWithSecret>
  /** The secret that signs now (the newest), as the portal's and the console's reveal show it. */
  currentSecret (id: string): Promise<EndpointWithSecret>
}

export function createEndpointStore (db: Database, options: EndpointStoreOptions): EndpointStore {
  const { keys } = options
  const seal = (value: string): string => sealAtRest(keys, value)
  /** Custom header values as stored: sealed when there are keys; a patch's null (a removal) kept. */
  const sealedHeaders = <T extends string | null>(headers: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(lowerCaseNames(headers)).map(([name, value]) => [name, value === null ? value : seal(value)])) as Record<string, T>
  const json = (value: unknown): string | null => value === null || value === undefined ? null : JSON.stringify(value)

  function check (problem: string | undefined, input: { url?: string, eventTypes?: string[], headers?: Record<string, string | null>, signing?: string, scheme?: string }): void {
    if (problem !== undefined) throw new errors.INVALID_ENDPOINT(problem)
    const headersProblem = customHeadersProblem(input.headers)
    if (headersProblem !== undefined) throw new errors.INVALID_ENDPOINT(headersProblem)
    const urlProblem = input.url === undefined ? undefined : endpointUrlProblem(input.url, { httpsOnly: options.httpsOnly })
    if (urlProblem !== undefined) throw new errors.INVALID_ENDPOINT(`url ${urlProblem}`)
    // A tenant's endpoint may name its own `endpoint.*` operational events besides the map's public types.
    if (input.signing === 'ed25519' && (input.scheme ?? 'standard-webhooks') !== 'standard-webhooks') throw new errors.INVALID_ENDPOINT(SIGNING_RULE)
    const unknown = options.knownTypes === undefined ? undefined : input.eventTypes?.find((type) => !options.knownTypes?.has(type) && !TENANT_OPERATIONAL_TYPES.includes(type))
    if (unknown !== undefined) throw new errors.INVALID_ENDPOINT(`eventTypes: ${JSON.stringify(unknown)} is not a public event type of the event map`)
  }

  async function get (id: string, client: pg.ClientBase | pg.Pool = db.pool): Promise<Endpoint> {
    const { rows } = await client.query<EndpointRow>(sql.byId(db.schema), [id])
    if (rows[0] === undefined) throw new errors.NOT_FOUND(`no endpoint ${id}`)
    return toEndpoint(rows[0])
  }

  return {
    get,

    async create (input, { operational = false, maxPerTenant } = {}) {
      if (operational) check(undefined, { url: input.url })
      else check(checkInput(input), input)
      const id = newId('ep')
      const made = input.signing === 'ed25519' ? newEd25519Keys() : undefined
      const secret = made?.signingKey ?? newSecret()
      const tls = input.tls === undefined ? null : storedTls(input.tls, input.url, keys)
      const oauth = input.oauth === undefined ? null : storedOAuth(input.oauth, options, keys)
      return await inTransaction(db.pool, async (client) => {
        if (maxPerTenant !== undefined && input.tenant !== undefined) {
          await client.query(sql.lockTenant(), [`anvil endpoints ${db.schema} ${input.tenant}`])
          const { rows } = await client.query<{ count: number }>(sql.countTenant(db.schema), [input.tenant])
          if ((rows[0]?.count ?? 0) >= maxPerTenant) throw new errors.ENDPOINT_QUOTA(input.tenant, maxPerTenant)
        }
        const { rows } = await client.query<EndpointRow>(sql.insert(db.schema),
          [id, input.url, input.tenant ?? null, input.eventTypes ?? [], input.description ?? '', input.enabled ?? true,
            input.scheme ?? 'standard-webhooks', input.rateLimit ?? null, operational, JSON.stringify(sealedHeaders(input.headers ?? {})),
            input.signing ?? 'hmac', made?.publicKey ?? null, json(tls), json(oauth)])
        await client.query(secretsSql.insert(db.schema), [id, seal(secret)])
        // The signing key never leaves the store: an Ed25519 endpoint shows its public key where a secret would show.
        return { ...toEndpoint(rows[0] as EndpointRow), secret: made?.publicKey ?? secret }
      })
    },

    async list (query: EndpointListQuery = {}): Promise<Page<Endpoint>> {
      const limit = outboundPageSize(query.limit)
      const after = query.cursor === undefined ? null : decodeCursor(query.cursor, ['string'])[0]
      const { rows } = await db.pool.query<EndpointRow>(sql.list(db.schema), [query.tenant ?? null, after, limit + 1])
      return toPage(rows, limit, (row) => [row.id], toEndpoint)
    },

    async update (id: string, patch: EndpointPatch): Promise<Endpoint> {
      check(checkPatch(patch), patch)
      const columns: Array<[EditableColumn, unknown]> = []
      if (patch.url !== undefined) columns.push(['url', patch.url])
      if (patch.tenant !== undefined) columns.push(['tenant', patch.tenant])
      if (patch.eventTypes !== undefined) columns.push(['event_types', patch.eventTypes])
      if (patch.description !== undefined) columns.push(['description', patch.description])
      if (patch.scheme !== undefined) columns.push(['scheme', patch.scheme])
      if (patch.rateLimit !== undefined) columns.push(['rate_limit', patch.rateLimit])
      if (patch.enabled !== undefined) columns.push(['enabled', patch.enabled])
      if (patch.headers !== undefined) columns.push(['headers', JSON.stringify(sealedHeaders(patch.headers))])
      if (patch.tls !== undefined) columns.push(['tls', json(patch.tls === null ? null : storedTls(patch.tls, undefined, keys))])
      if (patch.oauth !== undefined) columns.push(['oauth', json(patch.oauth === null ? null : storedOAuth(patch.oauth, options, keys))])
      return await inTransaction(db.pool, async (client) => {
        const { rows } = await client.query<EndpointRow>(sql.update(db.schema, columns.map(([name]) => name)),
          [id, ...columns.map(([, value]) => value)])
        if (rows[0] === undefined) throw new errors.NOT_FOUND(`no endpoint ${id}`)
        // The merge may add to what is there: counted once merged, and rolled back past the cap.
        if (Object.keys(rows[0].headers).length > MAX_CUSTOM_HEADERS) throw new errors.INVALID_ENDPOINT(`headers: at most ${MAX_CUSTOM_HEADERS}`)
        if (rows[0].signing === 'ed25519' && rows[0].scheme !== 'standard-webhooks') throw new errors.INVALID_ENDPOINT(SIGNING_RULE)
        if (rows[0].tls !== null && !rows[0].url.startsWith('https:')) throw new errors.INVALID_ENDPOINT('tls: the endpoint URL must be https')
        return toEndpoint(rows[0])
      })
    },

    async remove (id: string): Promise<void> {
      const { rowCount } = await db.pool.query(sql.remove(db.schema), [id])
      if (rowCount === 0) throw new errors.NOT_FOUND(`no endpoint ${id}`)
    },

    async currentSecret (id: string): Promise<EndpointWithSecret> {
      const endpoint = await get(id)
      if (endpoint.publicKey !== null) return { ...endpoint, secret: endpoint.publicKey }
      const { rows } = await db.pool.query<{ secret: string }>(secretsSql.current(db.schema), [id])
      if (rows[0] === undefined) throw new errors.NOT_FOUND(`endpoint ${id} has no current secret`)
      return { ...endpoint, secret: openAtRest(keys, rows[0].secret) }
    },

    async rotateSecret (id: string, graceSeconds = DEFAULT_SECRET_GRACE_SECONDS): Promise<EndpointWithSecret> {
      if (!Number.isInteger(graceSeconds) || graceSeconds < 0) throw new errors.INVALID_ENDPOINT('graceSeconds must be a whole number >= 0')
      return await inTransaction(db.pool, async (client) => {
        const endpoint = await get(id, client)
        const made = endpoint.signing === 'ed25519' ? newEd25519Keys() : undefined
        const secret = made?.signingKey ?? newSecret()
        await client.query(secretsSql.deleteExpired(db.schema), [id])
        await client.query(secretsSql.expireLive(db.schema), [id, graceSeconds])
        await client.query(secretsSql.insert(db.schema), [id, seal(secret)])
        await client.query(sql.touch(db.schema), [id, made?.publicKey ?? null])
        const publicKey = made?.publicKey ?? null
        return { ...endpoint, publicKey, secret: publicKey ?? secret }
      })
    }
  }
}

// Every call the console and the portal make goes through here: the admin API, same origin. The console sends
// its session cookie, and the CSRF token on anything that changes state; the portal sends its token as Bearer,
// and no cookie (so it needs no CSRF token). Both call only the documented API.
import type { Features } from '../../plugins/admin/session-state'
import { familyOf } from '../../plugins/admin/route-families'

export type { Page } from '../../src/paging/page-type'

/** The admin prefix: the console is served at `<prefix>/console/`, the portal at `<prefix>/portal/`. */
export const ADMIN_BASE = location.pathname.replace(/\/(console|portal)\/.*$/, '')

export class ApiError extends Error {
  constructor (readonly status: number, message: string, readonly code: string | undefined) {
    super(message)
  }
}

let csrfToken: string | null = null
let bearer: string | null = null
/** The route families the server has, as the session probe says; unknown (undefined) counts as served. */
let features: Features | undefined

export function setFeatures (served: Features | undefined): void {
  features = served
}

/** A feature that is not configured has no routes: its pages say so instead of asking. */
export function serves (feature: keyof Features): boolean {
  return features?.[feature] !== false
}

/** A route of a family the server does not have: never asked for (it would only answer 404). */
export class NotServed extends Error {
  constructor (readonly feature: keyof Features) {
    super(`not configured on this server: ${feature}`)
  }
}

const listeners = new Set<() => void>()

/** The portal's token: sent as `Authorization: Bearer`, with no cookie. */
export function setBearer (token: string | null): void {
  bearer = token
}

export function setCsrf (token: string | null): void {
  csrfToken = token
}

/** Called when the session or the portal's token ends (401): the app shows the login, or that the link expired. */
export function onLoggedOut (listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

export async function api<T = unknown> (method: string, path: string, body?: unknown): Promise<T> {
  const family = familyOf(path)
  if (family !== undefined && !serves(family)) throw new NotServed(family)
  const headers: Record<string, string> = {}
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`
  else if (method !== 'GET' && csrfToken !== null) headers['x-csrf-token'] = csrfToken
  const response = await fetch(ADMIN_BASE + path, {
    method, headers, credentials: bearer === null ? 'same-origin' : 'omit', body: body === undefined ? undefined : JSON.stringify(body)
  })
  if (response.status === 204) return undefined as T
  const data = await response.json().catch(() => null) as { error?: string, code?: string } | null
  if (!response.ok) {
    const error = new ApiError(response.status, data?.error ?? response.statusText, data?.code)
    if (response.status === 401 && path !== '/session') for (const listener of listeners) listener()
    throw error
  }
  return data as T
}

/** A query string of the set values only. */
export function query (params: Record<string, string | undefined>): string {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, value)
  const text = search.toString()
  return text === '' ? '' : `?${text}`
}

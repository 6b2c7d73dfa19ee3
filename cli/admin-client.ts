/**
 * The admin API as the CLI's event log: the same calls as src/event-log/event-log.ts, over HTTP with the Bearer
 * token. An error answer becomes the same Anvil error the server raised (its code and message).
 */
import type { EventLog } from '../src/event-log/event-log.js'
import type { EventDetail, EventPage } from '../src/event-log/event-queries.js'
import type { EventReplayResult } from '../src/event-log/event-replay.js'
import type { ReplayRunStatus } from '../src/event-log/replay-runs.js'
import { errors } from '../src/shared/errors.js'
import { redactUrl } from '../src/shared/redact-url.js'

/** Every request gives up after this long. */
export const ADMIN_REQUEST_TIMEOUT_MS = 30_000

export type CliEventLog = Pick<EventLog, 'list' | 'get' | 'replay' | 'count' | 'startReplay' | 'replayStatus' | 'cancelReplay' | 'close'>

/** An error the server answered with: its `code` and status kept, so the CLI prints its message as it would locally. */
class AdminApiError extends Error {
  constructor (message: string, readonly code: string, readonly statusCode: number) { super(message) }
}

/** One call to the admin API: its answer, or the error it answered with. */
export type AdminCall = <T>(method: string, path: string, body?: unknown) => Promise<T>

export function adminCall (admin: { url: string, token: string }): AdminCall {
  return async function call<T> (method: string, path: string, body?: unknown): Promise<T> {
    let res: Response
    try {
      res = await fetch(admin.url + path, {
        method,
        headers: { authorization: `Bearer ${admin.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(ADMIN_REQUEST_TIMEOUT_MS)
      })
    } catch (err) {
      throw new errors.INVALID_CONFIG(`the admin API at ${redactUrl(admin.url)} did not answer: ${(err as Error).message}`)
    }
    const answer = await res.json().catch(() => undefined) as { error?: string, code?: string } | undefined
    // A 404 without an Anvil code comes from outside the admin API: the URL points elsewhere on the server.
    if (res.status === 404 && answer?.code === undefined) {
      throw new errors.INVALID_CONFIG(`no admin API at ${redactUrl(admin.url)} (${path.split('?')[0]} answered 404): give its base URL, e.g. http://127.0.0.1:3000/admin`)
    }
    if (!res.ok) throw new AdminApiError(answer?.error ?? `HTTP ${res.status}`, answer?.code ?? 'ANVIL_ERR_ADMIN', res.status)
    return answer as T
  }
}

export function adminClient (admin: { url: string, token: string }): CliEventLog {
  const call = adminCall(admin)
  const query = (filter: unknown, page: { limit?: number, cursor?: string } = {}): string => {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries({ ...(filter as object), ...page })) if (value !== undefined) params.set(key, String(value))
    const text = params.toString()
    return text === '' ? '' : `?${text}`
  }
  const id = encodeURIComponent
  return {
    list: async (filter, page) => await call<EventPage>('GET', `/events${query(filter, page)}`),
    get: async (eventId) => await call<EventDetail>('GET', `/events/${id(eventId)}`),
    replay: async (eventId) => await call<EventReplayResult>('POST', `/events/${id(eventId)}/replay`),
    count: async (filter) => (await call<{ matched: number }>('POST', '/events/replay', { filter, dryRun: true })).matched,
    startReplay: async (filter, ratePerSecond) => await call<{ id: string, matched: number }>('POST', '/events/replay', { filter, ratePerSecond }),
    replayStatus: async (runId) => await call<ReplayRunStatus>('GET', `/events/replay/${id(runId)}`),
    cancelReplay: async (runId) => await call<ReplayRunStatus>('DELETE', `/events/replay/${id(runId)}`),
    close: async () => {}
  }
}

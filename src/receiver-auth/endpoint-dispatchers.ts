/**
 * The connections deliveries go out on: one shared SSRF-guarded Agent, and for each endpoint with `tls` an Agent
 * of its own, so its client certificate is presented to its receiver only and its CA trusted for it only (a
 * shared pool would hand one endpoint's authenticated connection to another endpoint of the same origin). An
 * endpoint's Agent is kept per version of its `tls` and closed when that changes or goes.
 */
import type { Agent, Dispatcher } from 'undici'
import { createGuardedDispatcher, type GuardOptions } from '../send/guarded-dispatcher.js'
import type { ClientTls } from './client-tls.js'

export interface EndpointDispatchers {
  /** The shared Agent: endpoints without `tls`, and OAuth token fetches. */
  readonly shared: Agent
  /** Where a delivery to the endpoint goes. */
  dispatcherFor (endpointId: string, tls: ClientTls | undefined): Dispatcher
  /** Lets the requests in flight finish, then closes every Agent. */
  close (): Promise<void>
  /** Aborts the requests in flight. */
  destroy (): Promise<void>
}

/** Endpoints with `tls` whose Agents are kept at once; the one used least recently is closed past it. */
export const MAX_TLS_AGENTS = 1000

export function createEndpointDispatchers (options: Omit<GuardOptions, 'tls'>): EndpointDispatchers {
  const shared = createGuardedDispatcher(options)
  const own = new Map<string, { version: string, agent: Agent }>()
  // Its requests in flight finish first; a close that fails has nothing left to close.
  const retire = (agent: Agent): void => { agent.close().catch(() => {}) }
  return {
    shared,
    dispatcherFor (endpointId, tls) {
      const held = own.get(endpointId)
      if (held !== undefined) own.delete(endpointId)
      if (tls === undefined) {
        if (held !== undefined) retire(held.agent)
        return shared
      }
      if (held !== undefined && held.version === tls.version) {
        own.set(endpointId, held)
        return held.agent
      }
      if (held !== undefined) retire(held.agent)
      if (own.size >= MAX_TLS_AGENTS) {
        const [oldest, least] = own.entries().next().value as [string, { agent: Agent }]
        own.delete(oldest)
        retire(least.agent)
      }
      const { version: _version, ...connect } = tls
      const agent = createGuardedDispatcher({ ...options, tls: connect })
      own.set(endpointId, { version: tls.version, agent })
      return agent
    },
    async close () {
      await Promise.all([shared.close(), ...[...own.values()].map(async ({ agent }) => await agent.close())])
    },
    async destroy () {
      await Promise.all([shared.destroy(), ...[...own.values()].map(async ({ agent }) => await agent.destroy())])
    }
  }
}

/**
 * `createRouter()`: typed handlers by event name, for the worker. The router is itself a handler (a function
 * of a `WebhookEvent`), so `createWorker(router, …)`, `anvilWorker({ handler: router })` and a handler module
 * exporting it need nothing new. Every matching handler runs, in order: the exact name (most specific first),
 * `<provider>:*`, then `onAny`; failures are gathered in one AggregateError, so the job is retried (and every
 * handler runs again: handlers must be idempotent).
 */
import { errors } from '../shared/errors.js'
import { PROVIDER_NAMES } from '../providers/presets.js'
import type { WebhookEvent } from '../worker/webhook-event.js'
import { HANDLER_START } from '../worker/handler-start.js'
import { parseEventBody } from './event-body.js'
import { routeNames } from './route-names.js'
import type { AnyEventHandler, AnyRoutedEvent, EventHandler, WebhookEventName } from './payloads.js'
import { silentLogger, type AnvilLogger } from '../shared/logger.js'

export interface HandlerRegistry {
  /** Runs `handler` for events of `name` (or of any of `names`): `stripe:invoice.paid`, `github:pull_request`, `shopify:*`. */
  on<N extends WebhookEventName>(name: N | readonly N[], handler: EventHandler<N>): this
  /** Runs `handler` for every event, after the named handlers. */
  onAny(handler: AnyEventHandler): this
  /** Runs `handler` for events no `on` handler matched (before `onAny`). Without one, such events complete, with a debug line. */
  onUnhandled(handler: AnyEventHandler): this
}

export interface Router extends HandlerRegistry {
  /** Dispatches one event: the worker calls this. */
  (event: WebhookEvent): Promise<void>
  /** Handlers that only see events of the source named `name` (`sources[].name`, default the provider's name). */
  source(name: string): HandlerRegistry
}

export interface RouterOptions {
  /** Where the "no handler" debug line goes; default the worker's logger. */
  logger?: AnvilLogger
}

type Kind = 'on' | 'any' | 'unhandled'

interface Registration {
  kind: Kind
  /** For `on`: the names it was registered for. */
  names: ReadonlySet<string>
  source?: string
  handler: (event: AnyRoutedEvent) => unknown
}

const NAME = /^([a-z-]+):(.+)$/

function checkName (name: unknown): string {
  const provider = typeof name === 'string' ? NAME.exec(name)?.[1] : undefined
  if (provider === undefined || !(PROVIDER_NAMES as readonly string[]).includes(provider)) {
    throw new errors.INVALID_OPTIONS(`router.on: ${JSON.stringify(name)} is not "<provider>:<eventType>" or "<provider>:*" with a provider of ${PROVIDER_NAMES.join(', ')} (onAny sees every event)`)
  }
  return name as string
}

/**
 * Failures of one event's handlers as one error, its message naming each. When every failure is BullMQ's
 * UnrecoverableError (matched by name, as BullMQ does), the whole is too, so the job is not retried.
 */
function handlerFailures (failures: unknown[], name: string, ran: number): AggregateError {
  const reasons = failures.map((err) => err instanceof Error ? err.message : String(err)).join('; ')
  const error = new AggregateError(failures, `${failures.length} of ${ran} handlers failed for ${name}: ${reasons}`)
  if (failures.every((err) => (err as Error | null)?.name === 'UnrecoverableError')) error.name = 'UnrecoverableError'
  return error
}

/** The event with its body parsed on first read of `data`, and the names it was routed under. */
function routedEvent (event: WebhookEvent): AnyRoutedEvent {
  let parsed: { value: unknown } | undefined
  const data = (): unknown => (parsed ??= { value: parseEventBody(event) }).value
  const quiet = (): unknown => { try { return data() } catch { return undefined } }
  const { names, action } = routeNames(event.provider ?? '', event.eventType, quiet)
  const routed = { ...event, name: names[0], action } as AnyRoutedEvent & { names: string[] }
  Object.defineProperty(routed, 'data', { get: data, enumerable: true })
  Object.defineProperty(routed, 'names', { value: names, enumerable: false })
  return routed
}

export function createRouter (options: RouterOptions = {}): Router {
  const registrations: Registration[] = []
  let log = options.logger
  let started = false

  function register (kind: Kind, names: readonly string[], handler: unknown, source?: string): void {
    const label = kind === 'on' ? names.join(', ') : kind === 'any' ? 'onAny' : 'onUnhandled'
    if (started) throw new errors.ROUTER_STARTED(label)
    if (typeof handler !== 'function') throw new errors.INVALID_OPTIONS(`router: the handler for ${label} must be a function`)
    registrations.push({ kind, names: new Set(names), source, handler: handler as Registration['handler'] })
  }

  function registry (source?: string): HandlerRegistry {
    const scoped: HandlerRegistry = {
      on (name: string | readonly string[], handler: unknown) {
        const names = (typeof name === 'string' ? [name] : Array.isArray(name) ? name : [name]).map(checkName)
        if (names.length === 0) throw new errors.INVALID_OPTIONS('router.on: give at least one event name')
        register('on', names, handler, source)
        return this
      },
      onAny (handler: unknown) { register('any', [], handler, source); return this },
      onUnhandled (handler: unknown) { register('unhandled', [], handler, source); return this }
    } as HandlerRegistry
    return scoped
  }

  /** The registrations that see this event, in dispatch order; each at most once. */
  function matching (event: AnyRoutedEvent & { names: string[] }): Registration[] {
    const inScope = registrations.filter((r) => r.source === undefined || r.source === event.source)
    const named = new Set<Registration>()
    for (const name of [...event.names, `${event.provider ?? ''}:*`]) {
      for (const r of inScope) if (r.kind === 'on' && r.names.has(name)) named.add(r)
    }
    const first = named.size > 0 ? [...named] : inScope.filter((r) => r.kind === 'unhandled')
    return [...first, ...inScope.filter((r) => r.kind === 'any')]
  }

  async function dispatch (event: WebhookEvent): Promise<void> {
    started = true
    const routed = routedEvent(event) as AnyRoutedEvent & { names: string[] }
    const label = routed.name ?? `${event.provider ?? event.source}:(no event type)`
    const handlers = matching(routed)
    if (!handlers.some((r) => r.kind !== 'any')) {
      (log ?? silentLogger).debug?.({ jobId: event.id, source: event.source, name: label }, 'anvil router: no handler for this event; completed')
    }
    const failures: unknown[] = []
    for (const r of handlers) {
      try {
        await r.handler(routed)
      } catch (err) {
        failures.push(err)
      }
    }
    if (failures.length > 0) throw handlerFailures(failures, label, handlers.length)
  }

  const router = Object.assign(dispatch, registry(), {
    source (name: string): HandlerRegistry {
      if (typeof name !== 'string' || name === '') throw new errors.INVALID_OPTIONS('router.source: give a source name')
      return registry(name)
    },
    [HANDLER_START] (context: { logger: AnvilLogger }) {
      started = true
      log ??= context.logger
    }
  })
  // `on` returns `this`: for the router's own methods that is the router.
  return router as unknown as Router
}

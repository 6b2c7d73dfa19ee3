/**
 * W3C trace context (https://www.w3.org/TR/trace-context/) for outgoing webhooks: what a message carries from its
 * publish to each delivery, and the spans recorded on the way through a BullMQ `Telemetry` (e.g. `new BullMQOtel()`),
 * so nothing here imports OpenTelemetry, which is optional.
 */
import { SpanKind, type Telemetry } from 'bullmq'

/** What a message and its delivery jobs carry: never more than these two headers (no baggage, nothing secret). */
export interface TraceContext {
  traceparent: string
  tracestate?: string
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE = '0'.repeat(32)
const ZERO_PARENT = '0'.repeat(16)
/** The spec's limit of tracestate: 32 members of printable ASCII, at most 512 characters kept. */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/

/**
 * A traceparent as version 00, or undefined when it is not one: the spec has a receiver ignore a malformed one
 * (and start a trace of its own), so no publish fails for it. A later version is read by its first four fields.
 */
export function parseTraceparent (value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const match = TRACEPARENT.exec(value.trim())
  if (match === null) return undefined
  const [, version, traceId, parentId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined]
  if (version === 'ff' || (version === '00' && rest !== undefined) || traceId === ZERO_TRACE || parentId === ZERO_PARENT) return undefined
  return `00-${traceId}-${parentId}-${flags}`
}

/** The trace context of two header values; a tracestate counts only beside a valid traceparent. */
export function traceContextOf (traceparent: unknown, tracestate?: unknown): TraceContext | undefined {
  const parent = parseTraceparent(Array.isArray(traceparent) ? undefined : traceparent)
  if (parent === undefined) return undefined
  // Repeated tracestate headers are one list (the spec's combining rule).
  const state = Array.isArray(tracestate) ? tracestate.join(',') : tracestate
  return typeof state === 'string' && TRACESTATE.test(state.trim()) ? { traceparent: parent, tracestate: state.trim() } : { traceparent: parent }
}

/** The trace id of a valid traceparent. */
export const traceIdOf = (traceparent: string): string => traceparent.slice(3, 35)

/** The context's trace, as the telemetry's propagator writes it (undefined: no span there). */
function contextOfMetadata (telemetry: Telemetry, context: unknown): TraceContext | undefined {
  let carrier: Record<string, unknown>
  try {
    carrier = JSON.parse(telemetry.contextManager.getMetadata(context)) as Record<string, unknown>
  } catch {
    return undefined
  }
  return traceContextOf(carrier.traceparent, carrier.tracestate)
}

export interface TraceSpan {
  /** The span's own context, for what comes after it (the next span, or the receiver's header). */
  readonly context: TraceContext | undefined
  setAttribute (key: string, value: string | number | boolean): void
  /** Ends it; an error is recorded on it first. */
  end (error?: Error): void
}

/**
 * A span named `name` of `kind`, the child of `parent` (a stored context) or, without one, of the active span, or a
 * trace's root. The active span wins over `parent` when it lies in the same trace: it is the nearer ancestor.
 */
export function startSpan (telemetry: Telemetry, name: string, kind: SpanKind, parent: TraceContext | undefined,
  attributes: Record<string, string | number | boolean> = {}): TraceSpan {
  const { contextManager, tracer } = telemetry
  const active = contextManager.active()
  const current = contextOfMetadata(telemetry, active)
  const base = parent === undefined || (current !== undefined && traceIdOf(current.traceparent) === traceIdOf(parent.traceparent))
    ? active
    : contextManager.fromMetadata(active, JSON.stringify(parent))
  const span = tracer.startSpan(name, { kind }, base)
  span.setAttributes(attributes)
  const context = contextOfMetadata(telemetry, span.setSpanOnContext(base))
  return {
    context,
    setAttribute (key, value) { span.setAttribute(key, value) },
    end (error) {
      if (error !== undefined) span.recordException(error)
      span.end()
    }
  }
}

/** A stored message's trace, spread into the message fan-out reads (src/outbox/fan-out.ts): `{}` outside a trace. */
export function traceOfRow (row: { traceparent: string | null, tracestate: string | null }): { trace?: TraceContext } {
  const trace = row.traceparent === null ? undefined : traceContextOf(row.traceparent, row.tracestate)
  return trace === undefined ? {} : { trace }
}

export { SpanKind }

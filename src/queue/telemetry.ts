import type { Telemetry } from 'bullmq'
import { errors } from '../shared/errors.js'
import { hasMethods } from '../shared/validate.js'

export type { Telemetry } from 'bullmq'

/**
 * Checks a BullMQ `telemetry` option (e.g. `new BullMQOtel()` from bullmq-otel). BullMQ calls these methods
 * on every add and job, so a wrong object would otherwise fail there, far from where it was given.
 */
export function checkTelemetry (value: unknown): Telemetry | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || !hasMethods((value as Telemetry).tracer, ['startSpan']) ||
    !hasMethods((value as Telemetry).contextManager, ['active', 'with', 'getMetadata', 'fromMetadata'])) {
    throw new errors.INVALID_OPTIONS('telemetry must be a BullMQ Telemetry object (e.g. new BullMQOtel() from bullmq-otel): { tracer, contextManager }')
  }
  return value as Telemetry
}

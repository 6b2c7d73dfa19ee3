// The public API: docs/api.md lists every name exported here, types included; test/public-api.test.ts holds the two equal.
export { default, default as anvil } from './plugins/ingress.js'
export type { AnvilPluginOptions, AnvilDecorator } from './plugins/ingress.js'
export { default as anvilWorker } from './plugins/worker.js'
export type { AnvilWorkerPluginOptions } from './plugins/worker.js'
export { default as anvilMetrics, instrument } from './plugins/metrics/metrics.js'
export type { AnvilMetricsOptions } from './plugins/metrics/metrics.js'
export { default as anvilHealth } from './plugins/health.js'
export type { AnvilHealthOptions, ReadyReport } from './plugins/health.js'
export { default as anvilAdmin } from './plugins/admin/admin.js'
export type { AnvilAdminOptions } from './plugins/admin/admin.js'
export { default as anvilOutbound } from './plugins/outbound.js'
export type { AnvilOutboundOptions } from './plugins/outbound.js'
export { journalAdminRoutes } from './plugins/journal/admin-routes.js'

export { channels as diagnosticsChannels } from './src/shared/diagnostics.js'
export type { EventLabels, RejectionReason } from './src/shared/diagnostics.js'
export { errors } from './src/shared/errors.js'
export { UnrecoverableError } from 'bullmq'

// Ingress options and the signature schemes a source may bring.
export type { EnqueueOptions } from './src/inbound/ingress.js'
export type { EnqueueResult } from './src/queue/webhook-queue.js'
export type { IngressOptions, SourceOptions } from './src/inbound/ingress-options.js'
export type { ProviderName } from './src/providers/presets.js'
export type { SignatureScheme, Verified, VerifiedEvent, Handshake, RequestInfo } from './src/signing/signature-scheme.js'
export type { IdempotencyStrategy, KeyInput } from './src/inbound/idempotency.js'

// Workers and handlers.
export { createWorker } from './src/worker/worker.js'
export type { AnvilWorker, WebhookHandler, WorkerOptions } from './src/worker/worker.js'
export type { AnvilLogger } from './src/shared/logger.js'
export type { WebhookEvent } from './src/worker/webhook-event.js'
export type { DeadLetterData, FailureContext, FailureReason } from './src/worker/dead-letter.js'
export { createRouter } from './src/handlers/router.js'
export type { Router, HandlerRegistry, RouterOptions } from './src/handlers/router.js'
export type {
  WebhookEventName, WebhookPayload, RoutedEvent, AnyRoutedEvent, EventHandler, AnyEventHandler, ProviderEventTypes,
  RoutedProvider, JsonObject, JsonValue, FormFields, SlackEventCallback, StripeEventType, GithubEventType, ShopifyTopic, SlackEventType,
  PaddleEventType, LinearEventType, SquareEventType, ZoomEventType, GitlabEventType, SendgridEventType, DiscordEventType
} from './src/handlers/payloads.js'

// PostgreSQL: migrations and the event journal.
export { migrate } from './src/db/migrate.js'
export type { MigrateResult } from './src/db/migrate.js'
export type { DatabaseInput } from './src/db/database.js'
export { openEventLog } from './src/event-log/open-event-log.js'
export type { EventLog, EventLogOptions, PageRequest } from './src/event-log/event-log.js'
export type { JournalOptions } from './src/journal/journal-options.js'
export type { JournalDb } from './src/journal/effect-scope.js'
export type { EventFilter } from './src/event-log/event-filter.js'
export type { EventItem, EventDetail, EventPage, EventEffect } from './src/event-log/event-queries.js'
export type { EventReplayResult } from './src/event-log/event-replay.js'
export type { ReplayRunStatus, ReplayRunState } from './src/event-log/replay-runs.js'

// Outgoing webhooks: publish, endpoints, the delivery worker and a store of one's own for it.
export { createOutbound } from './src/outbox/outbound.js'
export type { Outbound, OutboxStats } from './src/outbox/outbound.js'
export type { OutboundOptions } from './src/outbox/outbound-options.js'
export type { MessageInput, Publish, PublishOptions, PublishResult } from './src/outbox/publish.js'
export { defineEventTypes } from './src/catalog/event-types.js'
export type { EventTypeCatalog, EventTypeEntry, EventTypeInput, EventTypeMap, EventTypes, TypedMessage } from './src/catalog/event-types.js'
export type { AnvilTypes, CatalogMessage, CatalogPublish } from './src/catalog/anvil-types.js'
export type { Endpoint, EndpointInput, EndpointPatch, EndpointWithSecret } from './src/endpoints/endpoint-schemas.js'
export type { Delivery, Message, MessageWithDeliveries, Undelivered } from './src/delivery-log/delivery-schemas.js'
export { createDeliveryWorker } from './src/delivery/delivery-worker.js'
export type { DeliveryWorker } from './src/delivery/delivery-worker.js'
export type { DeliveryWorkerOptions, EndpointDisabledEvent } from './src/delivery/delivery-options.js'
export type { DeliveryStore, DeliveryAttempt, EndpointState } from './src/delivery/delivery-job.js'
export type { RetryScheduleSetting } from './src/delivery/delivery-schedule.js'

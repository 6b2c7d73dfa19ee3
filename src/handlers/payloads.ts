/**
 * The router's types: which event names exist (`<provider>:<eventType>`, `<provider>:*`) and what `event.data`
 * is for each. Stripe's and GitHub's payloads come from their packages when installed (optional peers,
 * ./peer-types.d.ts), and are JSON otherwise; the other providers' payloads are JSON.
 */
import type { WebhookEvent } from '../worker/webhook-event.js'
import type { GithubEventOperations, GithubEventType } from './generated/github-event-types.js'
import type { StripeEventType } from './generated/stripe-event-types.js'
import type { GithubOperations, StripeEvent } from './peer-types.js'
import type {
  DiscordEventType, GitlabEventType, LinearEventType, PaddleEventType, SendgridEventType, ShopifyTopic, SlackEventType,
  SquareEventType, ZoomEventType
} from './event-names.js'

export type {
  DiscordEventType, GitlabEventType, LinearEventType, PaddleEventType, SendgridEventType, ShopifyTopic, SlackEventType,
  SquareEventType, StripeEventType, ZoomEventType, GithubEventType
}

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject
export interface JsonObject { [key: string]: JsonValue }

/**
 * Each provider's event types, as the router names them. `anvil` and `standard-webhooks` carry whatever type
 * the sender chose; Twilio sends none (use `twilio:*`). Stripe's include the installed SDK's newer ones.
 */
export interface ProviderEventTypes {
  anvil: string
  stripe: StripeEventType | StripeEvent['type']
  github: GithubEventType
  shopify: ShopifyTopic
  slack: SlackEventType
  twilio: never
  'standard-webhooks': string
  paddle: PaddleEventType
  linear: LinearEventType
  square: SquareEventType
  zoom: ZoomEventType
  gitlab: GitlabEventType
  discord: DiscordEventType
  sendgrid: SendgridEventType
}

export type RoutedProvider = keyof ProviderEventTypes

/** Every name `router.on()` takes: `stripe:invoice.paid`, `github:pull_request.opened`, `github:pull_request`, `shopify:*`… */
export type WebhookEventName = {
  [P in RoutedProvider]: `${P}:${ProviderEventTypes[P]}` | `${P}:*`
}[RoutedProvider]

type StripePayload<T> = [Extract<StripeEvent, { type: T }>] extends [never] ? JsonObject : Extract<StripeEvent, { type: T }>

type GithubBody<K> = [GithubOperations] extends [never]
  ? JsonObject
  : K extends keyof GithubOperations ? GithubOperations[K]['requestBody']['content']['application/json'] : JsonObject

type GithubPayload<T> = T extends GithubEventType ? GithubBody<GithubEventOperations[T]> : JsonObject

/** Twilio posts form fields. */
export type FormFields = Record<string, string>

type PayloadOf<P, T> =
  P extends 'stripe' ? StripePayload<T>
    : P extends 'github' ? GithubPayload<T>
      : P extends 'twilio' ? FormFields
        : JsonObject

/**
 * `event.data` for handlers of `N` (a name, or a union of names): `WebhookPayload<'stripe:charge.succeeded'>`
 * is `Stripe.ChargeSucceededEvent` with `stripe` installed; `<provider>:*` is the union of the provider's.
 */
export type WebhookPayload<N extends WebhookEventName> =
  N extends `${infer P extends RoutedProvider}:${infer T}`
    ? T extends '*' ? PayloadOf<P, ProviderEventTypes[P]> : PayloadOf<P, T>
    : never

/** What a handler receives: the worker's event, with the body parsed and typed by the name it was registered for. */
export interface RoutedEvent<N extends WebhookEventName = WebhookEventName> extends WebhookEvent {
  /** The body, parsed once (JSON; form fields for form-encoded bodies, or their JSON `payload` field for GitHub and Slack). */
  readonly data: WebhookPayload<N>
  /** The most specific name the event was routed under (`github:pull_request.opened`); undefined without an event type. */
  readonly name?: string
  /** The body's `action`, for providers that have one (GitHub, Linear). */
  readonly action?: string
}

/** What `onAny` and `onUnhandled` handlers receive: any event, its body not typed. */
export interface AnyRoutedEvent extends WebhookEvent {
  readonly data: unknown
  readonly name?: string
  readonly action?: string
}

export type EventHandler<N extends WebhookEventName> = (event: RoutedEvent<N>) => unknown
export type AnyEventHandler = (event: AnyRoutedEvent) => unknown

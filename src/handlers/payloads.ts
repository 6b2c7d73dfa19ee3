/**
 * The router's types: which event names exist (`<provider>:<eventType>`, `<provider>:*`) and what `event.data`
 * is for each: a maintained type package's type where the package is installed (optional peers,
 * ./peer-payloads.ts), JSON otherwise.
 */
import type { WebhookEvent } from '../worker/webhook-event.js'
import type { GithubEventType } from './generated/github-event-types.js'
import type { StripeEventType } from './generated/stripe-event-types.js'
import type { LinearPayloads, PaddleEvent, SlackEvent, StripeEvent, ZoomEvent } from './peer-types.js'
import type {
  DiscordEventBody, DiscordPayload, FormFields, GithubPayload, GitlabPayload, JsonObject, LinearPayload, PaddlePayload, SlackPayload,
  SquarePayload, StripePayload, ZoomPayload
} from './peer-payloads.js'
import type {
  DiscordEventType, GitlabEventType, LinearEventType, PaddleEventType, SendgridEventType, ShopifyTopic, SlackEventType,
  SquareEventType, ZoomEventType
} from './event-names.js'

export type {
  DiscordEventType, GitlabEventType, LinearEventType, PaddleEventType, SendgridEventType, ShopifyTopic, SlackEventType,
  SquareEventType, StripeEventType, ZoomEventType, GithubEventType
}
export type { FormFields, JsonObject, JsonValue, SlackEventCallback } from './peer-payloads.js'

/** The entities `@linear/sdk` knows, when installed (`keyof never` would be every key). */
type LinearPackageEventType = [LinearPayloads] extends [never] ? never : keyof LinearPayloads & string

/**
 * Each provider's event types, as the router names them. `anvil` and `standard-webhooks` carry whatever type
 * the sender chose; Twilio sends none (use `twilio:*`). With a type package installed, its newer event types
 * are names too.
 */
export interface ProviderEventTypes {
  anvil: string
  stripe: StripeEventType | StripeEvent['type']
  github: GithubEventType
  shopify: ShopifyTopic
  slack: SlackEventType | SlackEvent['type']
  twilio: never
  'standard-webhooks': string
  paddle: PaddleEventType | `${PaddleEvent['event_type']}`
  linear: LinearEventType | LinearPackageEventType
  square: SquareEventType
  zoom: ZoomEventType | ZoomEvent['event']
  gitlab: GitlabEventType
  discord: DiscordEventType | `${DiscordEventBody['type']}`
  sendgrid: SendgridEventType
}

export type RoutedProvider = keyof ProviderEventTypes

/** Every name `router.on()` takes: `stripe:invoice.paid`, `github:pull_request.opened`, `github:pull_request`, `shopify:*`… */
export type WebhookEventName = {
  [P in RoutedProvider]: `${P}:${ProviderEventTypes[P]}` | `${P}:*`
}[RoutedProvider]

/** Shopify and SendGrid publish no maintained webhook payload types: their payloads are JSON. */
type PayloadOf<P, T> =
  P extends 'stripe' ? StripePayload<T>
    : P extends 'github' ? GithubPayload<T>
      : P extends 'slack' ? SlackPayload<T>
        : P extends 'discord' ? DiscordPayload<T>
          : P extends 'paddle' ? PaddlePayload<T>
            : P extends 'linear' ? LinearPayload<T>
              : P extends 'square' ? SquarePayload<T>
                : P extends 'gitlab' ? GitlabPayload<T>
                  : P extends 'zoom' ? ZoomPayload<T>
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

/**
 * `event.data` for the providers with a maintained type package (./peer-types.d.ts): the package's type when
 * it is installed, JSON otherwise. Each provider's rule is one alias here.
 */
import type { GithubEventOperations, GithubEventType } from './generated/github-event-types.js'
import type {
  DiscordInteraction, DiscordWebhookEvent, GithubOperations, GitlabPayloads, LinearPayloads, PaddleEvent, SlackEvent,
  SquareSchemas, StripeEvent, ZoomEvent
} from './peer-types.js'

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject
export interface JsonObject { [key: string]: JsonValue }

/** Form-encoded bodies (Twilio's, Slack's slash commands): each field's first value. */
export type FormFields = Record<string, string>

/** `Found`, or JSON when the package is missing or does not know the event. */
type OrJson<Found> = [Found] extends [never] ? JsonObject : Found

/** The members of union `U` whose `K` field is the event type `T` (string enums compared by their value). */
type ByType<U, K extends PropertyKey, T> = U extends { [P in K]: infer V } ? (`${V & (string | number)}` extends T ? U : never) : never

export type StripePayload<T> = OrJson<Extract<StripeEvent, { type: T }>>

type GithubBody<K> = K extends keyof GithubOperations ? GithubOperations[K]['requestBody']['content']['application/json'] : never
export type GithubPayload<T> = OrJson<T extends GithubEventType ? GithubBody<GithubEventOperations[T]> : never>

/**
 * An Events API callback as Slack posts it: the envelope, with the event of type `E` inside. Written from
 * Slack's Events API reference: `@slack/types` has the events, not the envelope.
 */
export interface SlackEventCallback<E> {
  type: 'event_callback'
  token: string
  team_id: string
  api_app_id: string
  event: E
  event_id: string
  event_time: number
  authorizations?: Array<{ enterprise_id: string | null, team_id: string | null, user_id: string, is_bot: boolean, is_enterprise_install?: boolean }>
  is_ext_shared_channel?: boolean
  event_context?: string
  enterprise_id?: string
  context_team_id?: string | null
  context_enterprise_id?: string | null
}

/** `app_rate_limited` is the outer body itself; slash commands are form fields; interactivity payloads are JSON. */
export type SlackPayload<T> =
  T extends 'slash_command' ? FormFields
    : T extends 'app_rate_limited' ? OrJson<ByType<SlackEvent, 'type', T>>
      : [ByType<SlackEvent, 'type', T>] extends [never] ? JsonObject : SlackEventCallback<ByType<SlackEvent, 'type', T>>

/** Interactions by their `InteractionType` name; webhook events as the envelope with the event of type `T` inside. */
type DiscordInteractionTypes = { APPLICATION_COMMAND: 2, MESSAGE_COMPONENT: 3, APPLICATION_COMMAND_AUTOCOMPLETE: 4, MODAL_SUBMIT: 5 }
export type DiscordEventBody = DiscordWebhookEvent extends infer W ? W extends { event: infer B extends object } ? B : never : never
type DiscordEventPayload<T> = [ByType<DiscordEventBody, 'type', T>] extends [never]
  ? never
  : Omit<Extract<DiscordWebhookEvent, { event: object }>, 'event'> & { event: ByType<DiscordEventBody, 'type', T> }
export type DiscordPayload<T> = OrJson<T extends keyof DiscordInteractionTypes
  ? ByType<DiscordInteraction, 'type', `${DiscordInteractionTypes[T]}`>
  : DiscordEventPayload<T>>

export type PaddlePayload<T> = OrJson<ByType<PaddleEvent, 'event_type', T>>

/** Linear names `Issue` and `Issue.create`: both are the `Issue` payload (its `action` tells them apart). */
export type LinearPayload<T> = OrJson<T extends `${infer Entity}.${string}` ? LinearEntityPayload<Entity> : LinearEntityPayload<T>>
type LinearEntityPayload<E> = E extends keyof LinearPayloads ? LinearPayloads[E] : never

/** `payment.updated` → the `Raw` of `serialization.PaymentUpdatedEvent` (Square's SDK names each event so). */
type Pascal<S extends string> = S extends `${infer Head}${'.' | '_'}${infer Tail}` ? `${Capitalize<Head>}${Pascal<Tail>}` : Capitalize<S>
type RawOf<Schema> = Schema extends { jsonOrThrow: (...args: never[]) => infer Raw } ? Raw : never
export type SquarePayload<T> = OrJson<T extends string
  ? `${Pascal<T>}Event` extends keyof SquareSchemas ? RawOf<SquareSchemas[`${Pascal<T>}Event`]> : never
  : never>

export type GitlabPayload<T> = OrJson<T extends keyof GitlabPayloads ? GitlabPayloads[T] : never>

export type ZoomPayload<T> = OrJson<ByType<ZoomEvent, 'event', T>>

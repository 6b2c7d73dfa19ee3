/**
 * The optional peer dependencies, imported for their types only. This file is a hand-written `.d.ts` (the
 * build copies it to dist) because tsc drops a `@ts-ignore` from the declarations it emits: without the
 * package installed, the ignored import is the error type (an `any`), each alias below falls back to
 * `never`, and src/handlers/peer-payloads.ts turns that into JSON payloads. test/package-types.test.ts
 * compiles a consumer with and without the packages.
 */
// @ts-ignore -- optional peer dependency `stripe`: absent, this import is `any`
import type StripeSdk from 'stripe'
// @ts-ignore -- optional peer dependency `@octokit/openapi-webhooks-types`: absent, this import is `any`
import type { operations as GithubWebhookOperations } from '@octokit/openapi-webhooks-types'
// @ts-ignore -- optional peer dependency `@slack/types`: absent, this import is `any`
import type { SlackEvent as SlackEventsApiEvent } from '@slack/types'
// @ts-ignore -- optional peer dependency `discord-api-types`: absent, these imports are `any`
import type { APIInteraction, APIWebhookEvent } from 'discord-api-types/v10'
// @ts-ignore -- optional peer dependency `@paddle/paddle-node-sdk`: absent, this import is `any`
import type { IEvents as PaddleNotificationEvents } from '@paddle/paddle-node-sdk'
// @ts-ignore -- optional peer dependency `@linear/sdk` (an ES module: `@linear/sdk/webhooks` needs NodeNext or Bundler resolution)
import type { LinearWebhookEventTypeMap } from '@linear/sdk/webhooks'
// @ts-ignore -- optional peer dependency `square`: absent, this import is `any`
import type { serialization as SquareSerialization } from 'square'
// @ts-ignore -- optional peer dependency `@zoom/rivet`: absent, these imports are `any`
import type { MeetingsEvents } from '@zoom/rivet/meetings'
// @ts-ignore -- optional peer dependency `@zoom/rivet`
import type { UsersEvents } from '@zoom/rivet/users'
// @ts-ignore -- optional peer dependency `@gitbeaker/core`: absent (or without one of these), these imports are `any`. One line: the ignore covers only the next.
import type { WebhookCommitNoteEventSchema, WebhookDeploymentEventSchema, WebhookEmojiEventSchema, WebhookFeatureFlagEventSchema, WebhookGroupMemberEventSchema, WebhookIssueEventSchema, WebhookIssueNoteEventSchema, WebhookJobEventSchema, WebhookMergeRequestEventSchema, WebhookMergeRequestNoteEventSchema, WebhookPipelineEventSchema, WebhookPushEventSchema, WebhookReleaseEventSchema, WebhookSnippetNoteEventSchema, WebhookSubGroupEventSchema, WebhookTagEventSchema, WebhookWikiEventSchema } from '@gitbeaker/core'

/**
 * A type nothing real is assignable to, but `any` is. The test is made on a wrapping object: an unresolved
 * import is the compiler's error type, and a conditional on it directly (the usual `0 extends 1 & T`) yields
 * `any` instead of either branch.
 */
declare const UNRESOLVED: unique symbol
interface Unresolved { [UNRESOLVED]: true }
type Resolved<T> = { type: T } extends { type: Unresolved } ? never : T

/** `Stripe.Event`, the union of every event the installed `stripe` knows; `never` without it. */
export type StripeEvent = Resolved<StripeSdk.Event>

/** `@octokit/openapi-webhooks-types`' webhook operations; `never` without it. */
export type GithubOperations = Resolved<GithubWebhookOperations>

/** `@slack/types`' `SlackEvent`: the inner `event` of an Events API callback; `never` without it. */
export type SlackEvent = Resolved<SlackEventsApiEvent>

/** `discord-api-types`' interactions (`APIInteraction`) and webhook events (`APIWebhookEvent`); `never` without it. */
export type DiscordInteraction = Resolved<APIInteraction>
export type DiscordWebhookEvent = Resolved<APIWebhookEvent>

/** `@paddle/paddle-node-sdk`'s notification bodies as sent (snake_case, `IEvents`); `never` without it. */
export type PaddleEvent = Resolved<PaddleNotificationEvents>

/** `@linear/sdk/webhooks`' payload type by `Linear-Event`; `never` without it. */
export type LinearPayloads = Resolved<LinearWebhookEventTypeMap>

/** `square`'s serialization schemas, whose `Raw` is each webhook event as sent (snake_case); `never` without it. */
export type SquareSchemas = Resolved<typeof SquareSerialization>

/** `@zoom/rivet`'s meeting, webinar and recording events, and user events (`event` names each); `never` without it. */
export type ZoomEvent = Resolved<MeetingsEvents> | Resolved<UsersEvents>

type GitlabNote = Resolved<WebhookCommitNoteEventSchema> | Resolved<WebhookMergeRequestNoteEventSchema> | Resolved<WebhookIssueNoteEventSchema> | Resolved<WebhookSnippetNoteEventSchema>

/** `@gitbeaker/core`'s webhook event schemas by `X-Gitlab-Event`; each `never` without the package. */
export interface GitlabPayloads {
  'Push Hook': Resolved<WebhookPushEventSchema>
  'Tag Push Hook': Resolved<WebhookTagEventSchema>
  'Issue Hook': Resolved<WebhookIssueEventSchema>
  'Confidential Issue Hook': Resolved<WebhookIssueEventSchema>
  'Note Hook': GitlabNote
  'Confidential Note Hook': GitlabNote
  'Merge Request Hook': Resolved<WebhookMergeRequestEventSchema>
  'Wiki Page Hook': Resolved<WebhookWikiEventSchema>
  'Pipeline Hook': Resolved<WebhookPipelineEventSchema>
  'Job Hook': Resolved<WebhookJobEventSchema>
  'Deployment Hook': Resolved<WebhookDeploymentEventSchema>
  'Feature Flag Hook': Resolved<WebhookFeatureFlagEventSchema>
  'Release Hook': Resolved<WebhookReleaseEventSchema>
  'Emoji Hook': Resolved<WebhookEmojiEventSchema>
  'Member Hook': Resolved<WebhookGroupMemberEventSchema>
  'Subgroup Hook': Resolved<WebhookSubGroupEventSchema>
}

/**
 * The optional peer dependencies, imported for their types only. This file is a hand-written `.d.ts` (the
 * build copies it to dist) because tsc drops a `@ts-ignore` from the declarations it emits: without the
 * package installed, the ignored import resolves to `any`, and each alias below falls back to `never`, which
 * src/handlers/payloads.ts turns into JSON payloads. test/handlers-peer-types.test.ts compiles a consumer
 * with and without the packages.
 */
// @ts-ignore -- optional peer dependency `stripe`: absent, this import is `any`
import type StripeSdk from 'stripe'
// @ts-ignore -- optional peer dependency `@octokit/openapi-webhooks-types`: absent, this import is `any`
import type { operations as GithubWebhookOperations } from '@octokit/openapi-webhooks-types'

/** True for `any` only: an unresolved import. */
type IsAny<T> = 0 extends 1 & T ? true : false

/** `Stripe.Event`, the union of every event the installed `stripe` knows; `never` without it. */
export type StripeEvent = IsAny<StripeSdk.Event> extends true ? never : StripeSdk.Event

/** `@octokit/openapi-webhooks-types`' webhook operations; `never` without it. */
export type GithubOperations = IsAny<GithubWebhookOperations> extends true ? never : GithubWebhookOperations

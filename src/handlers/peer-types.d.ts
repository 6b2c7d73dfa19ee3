/**
 * The optional peer dependencies, imported for their types only. This file is a hand-written `.d.ts` (the
 * build copies it to dist) because tsc drops a `@ts-ignore` from the declarations it emits: without the
 * package installed, the ignored import is the error type (an `any`), each alias below falls back to
 * `never`, and src/handlers/payloads.ts turns that into JSON payloads. test/handlers-peer-types.test.ts compiles a consumer
 * with and without the packages.
 */
// @ts-ignore -- optional peer dependency `stripe`: absent, this import is `any`
import type StripeSdk from 'stripe'
// @ts-ignore -- optional peer dependency `@octokit/openapi-webhooks-types`: absent, this import is `any`
import type { operations as GithubWebhookOperations } from '@octokit/openapi-webhooks-types'

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

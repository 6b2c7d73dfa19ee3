/**
 * Compile-time contract of the router, through the built package (checked by `npm run test:types`, never run): names autocomplete and a
 * misspelled one is an error; `event.data` narrows by name, to the type packages' types (all installed here as
 * devDependencies: stripe, @octokit/openapi-webhooks-types, @slack/types, discord-api-types,
 * @paddle/paddle-node-sdk, @linear/sdk, square, @gitbeaker/core, @zoom/rivet), JSON for the providers without
 * one (and for an event a package does not know). test/package-types.test.ts compiles a
 * consumer without the packages.
 */
import type Stripe from 'stripe'
import type { components } from '@octokit/openapi-webhooks-types'
import type { AppMentionEvent } from '@slack/types'
import type { APIApplicationCommandInteraction } from 'discord-api-types/v10'
import type { EntityWebhookPayloadWithIssueData } from '@linear/sdk/webhooks'
import type { serialization } from 'square'
import type { WebhookPushEventSchema } from '@gitbeaker/core'
import type { MeetingStartedEvent } from '@zoom/rivet/meetings'
import {
  createRouter, type JsonObject, type RoutedEvent, type SlackEventCallback, type WebhookEventName, type WebhookPayload
} from '@anvil/fastify'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const expectType = <T extends true>(_value?: T): void => {}

const router = createRouter()

// ---- Stripe: Extract<Stripe.Event, { type }> ----
router.on('stripe:charge.succeeded', (event) => {
  expectType<Equal<typeof event.data, Stripe.ChargeSucceededEvent>>()
  const amount: number = event.data.data.object.amount
  return amount
})
router.on('stripe:invoice.paid', async (event) => {
  const invoice: Stripe.Invoice = event.data.data.object
  // @ts-expect-error -- an invoice has no `amount`: the payload is the invoice event's, not any event's
  return invoice.amount
})
// @ts-expect-error -- misspelled event type
router.on('stripe:invoice.payed', () => {})
// @ts-expect-error -- misspelled provider
router.on('strype:invoice.paid', () => {})
// @ts-expect-error -- no provider at all
router.on('invoice.paid', () => {})

// ---- arrays: the union of the names' payloads ----
router.on(['stripe:invoice.paid', 'stripe:invoice.payment_failed'], (event) => {
  expectType<Equal<typeof event.data, Stripe.InvoicePaidEvent | Stripe.InvoicePaymentFailedEvent>>()
  if (event.data.type === 'invoice.payment_failed') {
    expectType<Equal<typeof event.data, Stripe.InvoicePaymentFailedEvent>>()
  }
})
// @ts-expect-error -- one misspelled name in the array is enough
router.on(['stripe:invoice.paid', 'stripe:invoice.payed'], () => {})

// ---- wildcards ----
router.on('stripe:*', (event) => {
  expectType<Equal<typeof event.data, Stripe.Event>>()
})

// ---- GitHub: @octokit/openapi-webhooks-types, with and without the action ----
router.on('github:pull_request.opened', (event) => {
  expectType<Equal<typeof event.data, components['schemas']['webhook-pull-request-opened']>>()
  const action: 'opened' = event.data.action
  return [action, event.data.pull_request.title]
})
router.on('github:pull_request', (event) => {
  // Every pull_request action's body: the action narrows it.
  if (event.data.action === 'closed') {
    const merged: boolean | null = event.data.pull_request.merged
    return merged
  }
})
router.on('github:push', (event) => {
  const ref: string = event.data.ref
  return ref
})
router.on('github:*', (event) => event.data)
// @ts-expect-error -- no such action
router.on('github:pull_request.opend', () => {})
// @ts-expect-error -- GitHub names are snake_case, as in X-GitHub-Event
router.on('github:pull-request', () => {})

// ---- the other typed providers: their maintained packages' types (installed here as devDependencies) ----
router.on('slack:app_mention', (event) => {
  expectType<Equal<typeof event.data, SlackEventCallback<AppMentionEvent>>>()
  const text: string = event.data.event.text
  return [text, event.data.team_id]
})
router.on('slack:slash_command', (event) => {
  expectType<Equal<typeof event.data, Record<string, string>>>()
})
router.on('discord:APPLICATION_COMMAND', (event) => {
  expectType<Equal<typeof event.data, APIApplicationCommandInteraction>>()
  return event.data.data.name
})
router.on('discord:APPLICATION_AUTHORIZED', (event) => {
  const scopes: string[] | undefined = event.data.event.data.scopes
  return scopes
})
router.on('paddle:transaction.completed', (event) => {
  const id: string = event.data.data.id
  // @ts-expect-error -- the body as sent is snake_case: the SDK's camelCase entity is not what arrives
  return [id, event.data.data.customerId]
})
router.on(['linear:Issue.create', 'linear:Issue'], (event) => {
  expectType<Equal<typeof event.data, EntityWebhookPayloadWithIssueData>>()
  return event.data.data.title
})
router.on('square:payment.updated', (event) => {
  expectType<Equal<typeof event.data, serialization.PaymentUpdatedEvent.Raw>>()
  return event.data.data?.object?.payment?.amount_money?.amount
})
router.on('zoom:meeting.started', (event) => {
  expectType<Equal<typeof event.data, MeetingStartedEvent>>()
  const topic: string = event.data.payload.object.topic
  return topic
})
router.on('gitlab:Push Hook', (event) => {
  expectType<Equal<typeof event.data, WebhookPushEventSchema>>()
  const ref: string = event.data.ref
  return ref
})
// @ts-expect-error -- not a Slack event type
router.on('slack:app_mentioned', () => {})
// @ts-expect-error -- Paddle names are snake_case
router.on('paddle:transaction.paymentFailed', () => {})

// ---- providers without a type package: documented names, JSON payloads ----
router.on('shopify:orders/create', (event) => {
  expectType<Equal<typeof event.data, JsonObject>>()
  const total = event.data.total_price
  // @ts-expect-error -- JSON: a field may be any JSON value, so it must be narrowed before use as a string
  total.toUpperCase()
})
router.on(['zoom:app_deauthorized', 'sendgrid:delivered', 'standard-webhooks:user.created', 'anvil:test.ping'], (event) => {
  expectType<Equal<typeof event.data, JsonObject>>()
})
router.on('twilio:*', (event) => {
  expectType<Equal<typeof event.data, Record<string, string>>>()
})
// @ts-expect-error -- not a Shopify topic
router.on('shopify:orders/created', () => {})
// @ts-expect-error -- Twilio sends no event type: only twilio:* exists
router.on('twilio:message', () => {})

// ---- source(): the same names and payloads, for one source ----
router.source('stripe-eu').on('stripe:charge.refunded', (event) => {
  expectType<Equal<typeof event.data, Stripe.ChargeRefundedEvent>>()
}).onAny((event) => {
  expectType<Equal<typeof event.data, unknown>>()
})
// @ts-expect-error -- misspelled inside a source scope too
router.source('stripe-eu').on('stripe:charge.refundd', () => {})

// ---- onAny / onUnhandled see untyped data; chaining returns the router ----
const chained: typeof router = router.onAny((event) => event.name).onUnhandled((event) => event.eventType)
void chained

// ---- named helper types, for a handler in its own file ----
export async function onInvoicePaid (event: RoutedEvent<'stripe:invoice.paid'>): Promise<string> {
  return event.data.data.object.id ?? ''
}
router.on('stripe:invoice.paid', onInvoicePaid)
// @ts-expect-error -- a handler typed for one event cannot be registered for another
router.on('stripe:charge.succeeded', onInvoicePaid)
expectType<Equal<WebhookPayload<'stripe:invoice.paid'>, Stripe.InvoicePaidEvent>>()
const name: WebhookEventName = 'github:issues.opened'
void name
// @ts-expect-error -- not an event name
const wrong: WebhookEventName = 'github:issue.opened'
void wrong

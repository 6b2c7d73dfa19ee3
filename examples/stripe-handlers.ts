// Typed Stripe handlers, each in its own function: `RoutedEvent<'stripe:…'>` names its event, so `event.data`
// is that Stripe event (with `stripe` installed; JSON without). The default export is a router, so this file
// is also a handler module: `anvil worker --handler dist/examples/stripe-handlers.js`.
import { createRouter, type RoutedEvent, type Router } from '../index.js'

/** Where the handlers say what they did: one JSON line on stdout by default. */
export type Report = (fields: Record<string, unknown>) => void
const toStdout: Report = (fields) => { console.log(JSON.stringify(fields)) }

export function onCheckoutCompleted (report: Report) {
  return async (event: RoutedEvent<'stripe:checkout.session.completed'>): Promise<void> => {
    const session = event.data.data.object
    // Stripe retries for three days, re-signing each time; Anvil dedupes on the event id, so this runs once per event
    // (and again only when a handler of this event failed: keep it idempotent, keyed on the session id).
    report({ fulfil: session.id, amount: session.amount_total, email: session.customer_details?.email })
  }
}

export function onInvoice (report: Report) {
  return async (event: RoutedEvent<'stripe:invoice.paid' | 'stripe:invoice.payment_failed'>): Promise<void> => {
    const invoice = event.data.data.object
    // The union narrows on the event's type.
    if (event.data.type === 'invoice.paid') report({ paid: invoice.id, amount: invoice.amount_paid })
    else report({ dunning: invoice.id, attempts: invoice.attempt_count })
  }
}

export function createStripeRouter (report: Report = toStdout): Router {
  return createRouter()
    .on('stripe:checkout.session.completed', onCheckoutCompleted(report))
    .on(['stripe:invoice.paid', 'stripe:invoice.payment_failed'], onInvoice(report))
    .on('stripe:charge.refunded', (event) => { report({ refunded: event.data.data.object.id, amount: event.data.data.object.amount_refunded }) })
    .onUnhandled((event) => { report({ ignored: event.name }) })
}

export default createStripeRouter()

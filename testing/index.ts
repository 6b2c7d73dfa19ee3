/** `@anvil/fastify/testing`: sign requests as each provider does, realistic fixtures, and `injectWebhook`. */
export { signRequest } from '../src/testing/sign-request.js'
export type { SignRequestOptions, SignedRequest } from '../src/testing/sign-request.js'
export { generateKeyPair } from '../src/testing/generate-key-pair.js'
export type { TestKeyPair } from '../src/testing/generate-key-pair.js'
export { fixture, fixtureNames } from '../src/testing/fixture.js'
export type { FixtureName, FixtureOptions, WebhookFixture } from '../src/testing/fixture.js'
export { injectWebhook } from './inject-webhook.js'
export type { InjectableApp, InjectedResponse, InjectWebhookOptions } from './inject-webhook.js'

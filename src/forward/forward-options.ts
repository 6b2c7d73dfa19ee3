/**
 * Forward mode: a source's `forward` sends each verified, deduplicated event on to a URL, signed with
 * Anvil's outgoing signature, so a service in any language receives webhooks with one signature to check.
 */
import { Type, type Static } from '@sinclair/typebox'
import { standardKey } from '../providers/standard-webhooks.js'
import { MIN_SECRET_BYTES, secretProblem } from '../signing/secret-problem.js'
import { endpointUrlProblem, MAX_ENDPOINT_URL_LENGTH } from '../endpoints/endpoint-url.js'

export const ForwardSchema = Type.Object({
  /** Where each verified event is POSTed (http or https, no credentials). */
  url: Type.String({ minLength: 1, maxLength: MAX_ENDPOINT_URL_LENGTH }),
  /** Signs the forwarded requests: for Standard Webhooks `whsec_` plus base64 (as `standardwebhooks` expects). */
  secret: Type.String({ minLength: 1 }),
  /** The signature. @defaultValue `'standard-webhooks'` */
  scheme: Type.Optional(Type.Union([Type.Literal('standard-webhooks'), Type.Literal('stripe')]))
}, { additionalProperties: false })

export type ForwardOptions = Static<typeof ForwardSchema>

/** What is wrong with a forward, completing "`<where>` …" (never quoting the secret or URL), or undefined. */
export function forwardProblem (forward: ForwardOptions, allowShort: boolean): string | undefined {
  const url = endpointUrlProblem(forward.url)
  if (url !== undefined) return `url ${url}`
  if ((forward.scheme ?? 'standard-webhooks') === 'stripe') {
    const problem = secretProblem(forward.secret, allowShort, 'allowShortSecrets: true')
    return problem === undefined ? undefined : `secret ${problem}`
  }
  let key: Buffer
  try {
    key = standardKey(forward.secret)
  } catch {
    return 'secret must be "whsec_" followed by base64'
  }
  return key.length >= MIN_SECRET_BYTES || allowShort ? undefined : `secret must hold at least ${MIN_SECRET_BYTES} bytes after "whsec_"`
}

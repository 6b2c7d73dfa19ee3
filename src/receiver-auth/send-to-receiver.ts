/**
 * One POST to an endpoint's receiver, authenticated as the endpoint says: on its own connections for mutual TLS,
 * with a bearer token for OAuth. A 401 gets one fresh token and one more try (the receiver may have revoked or
 * rotated the one kept); a second 401 is the attempt's outcome.
 */
import { sendWebhook, type SendOptions, type SendRequest, type SendResult } from '../send/send-webhook.js'
import type { EndpointDispatchers } from './endpoint-dispatchers.js'
import { TokenFailure, type OAuthTokens } from './oauth-tokens.js'
import type { ReceiverAuth } from './receiver-auth-state.js'

export interface ReceiverDeps {
  send: SendOptions
  /** Without: every delivery on `send.dispatcher`, and `tls` and `oauth` are not honoured (a store that has neither). */
  dispatchers?: EndpointDispatchers
  tokens?: OAuthTokens
}

function tokenFailed (err: unknown, started: number): SendResult {
  if (!(err instanceof TokenFailure)) throw err
  return { success: false, durationMs: Math.round(performance.now() - started), errorClass: err.errorClass, errorMessage: `OAuth: ${err.message}`, responseHead: '' }
}

export async function sendToReceiver (endpointId: string, req: SendRequest, auth: ReceiverAuth, deps: ReceiverDeps): Promise<SendResult> {
  const send = deps.dispatchers === undefined ? deps.send : { ...deps.send, dispatcher: deps.dispatchers.dispatcherFor(endpointId, auth.tls) }
  const { oauth } = auth
  if (oauth === undefined || deps.tokens === undefined) return await sendWebhook(req, send)
  const started = performance.now()
  const bearer = (token: string): SendRequest => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } })
  let token: string
  try {
    token = await deps.tokens.token(endpointId, oauth)
  } catch (err) {
    return tokenFailed(err, started)
  }
  const result = await sendWebhook(bearer(token), send)
  if (result.httpStatus !== 401) return result
  deps.tokens.forget(endpointId, token)
  try {
    token = await deps.tokens.token(endpointId, oauth)
  } catch (err) {
    return tokenFailed(err, started)
  }
  return await sendWebhook(bearer(token), send)
}

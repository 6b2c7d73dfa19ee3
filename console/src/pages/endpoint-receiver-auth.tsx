import { useState } from 'preact/hooks'
import { api } from '../api'
import { ErrorNote, Field, Time } from '../components'
import { useCanWrite } from '../scope'
import type { Endpoint } from './endpoint-types'

const value = (e: Event): string => (e.target as HTMLInputElement | HTMLTextAreaElement).value
const optional = (text: string): string | undefined => text.trim() === '' ? undefined : text

/**
 * How the endpoint authenticates to its receiver, beside the signature: mutual TLS (its CA and client certificate;
 * the certificate's fingerprint and expiry shown, never its key) and OAuth 2.0 client credentials (never the
 * secret). Each is set whole or removed; the API stores the key and the secret encrypted.
 */
export function ReceiverAuthSection ({ endpoint, onChanged }: { endpoint: Endpoint, onChanged: () => void }) {
  const canWrite = useCanWrite()
  const [note, setNote] = useState<string | null>(null)
  const [error, setError] = useState<Error | null>(null)
  const [ca, setCa] = useState('')
  const [cert, setCert] = useState('')
  const [key, setKey] = useState('')
  const [oauth, setOauth] = useState({ tokenUrl: '', clientId: '', clientSecret: '', scope: '', audience: '' })
  const patch = (body: object, done: string, clear: () => void): void => {
    setNote(null); setError(null)
    api('PATCH', `/endpoints/${encodeURIComponent(endpoint.id)}`, body).then(() => { clear(); setNote(done); onChanged() }, setError)
  }
  const certificate = endpoint.tls?.certificate ?? null
  return (
    <section aria-labelledby='receiver-auth-title' class='panel'>
      <h2 id='receiver-auth-title'>Receiver authentication</h2>
      <p class='muted'>Mutual TLS and OAuth 2.0 for receivers that ask for more than the signature. The private key and the client secret are stored encrypted and never shown again.</p>
      <h3>Mutual TLS</h3>
      {endpoint.tls === null
        ? <p class='empty' data-testid='tls-state'>No client certificate.</p>
        : (
          <dl data-testid='tls-state'>
            <dt>Client certificate</dt>
            <dd>{certificate === null ? 'none (a CA only)' : <><code>{certificate.subject}</code>, expires <Time value={certificate.expiresAt} /></>}</dd>
            {certificate !== null && <><dt>SHA-256 fingerprint</dt><dd><code class='raw'>{certificate.fingerprint}</code></dd></>}
            <dt>Receiver's CA</dt><dd>{endpoint.tls.ca ? 'its own CA' : "the system's CAs"}</dd>
          </dl>
          )}
      {canWrite && (
        <form aria-label='Set mutual TLS' onSubmit={(e) => { e.preventDefault(); patch({ tls: { ca: optional(ca), cert: optional(cert), key: optional(key) } }, 'Mutual TLS saved', () => { setCa(''); setCert(''); setKey('') }) }}>
          <Field label="Receiver's CA (PEM, optional)"><textarea name='tls-ca' rows={3} value={ca} onInput={(e) => setCa(value(e))} /></Field>
          <Field label='Client certificate (PEM)'><textarea name='tls-cert' rows={3} value={cert} onInput={(e) => setCert(value(e))} /></Field>
          <Field label='Private key (PEM)'><textarea name='tls-key' rows={3} autocomplete='off' spellcheck={false} value={key} onInput={(e) => setKey(value(e))} /></Field>
          <div class='actions'>
            <button type='submit'>Save mutual TLS</button>
            {endpoint.tls !== null && <button type='button' onClick={() => patch({ tls: null }, 'Mutual TLS removed', () => {})}>Remove</button>}
          </div>
        </form>
      )}
      <h3>OAuth 2.0 client credentials</h3>
      {endpoint.oauth === null
        ? <p class='empty' data-testid='oauth-state'>No OAuth.</p>
        : (
          <dl data-testid='oauth-state'>
            <dt>Token URL</dt><dd><code>{endpoint.oauth.tokenUrl}</code></dd>
            <dt>Client id</dt><dd><code>{endpoint.oauth.clientId}</code></dd>
            <dt>Client secret</dt><dd><code class='masked' aria-label='Hidden value'>••••••••</code></dd>
            {endpoint.oauth.scope !== null && <><dt>Scope</dt><dd>{endpoint.oauth.scope}</dd></>}
            {endpoint.oauth.audience !== null && <><dt>Audience</dt><dd>{endpoint.oauth.audience}</dd></>}
          </dl>
          )}
      {canWrite && (
        <form aria-label='Set OAuth' onSubmit={(e) => {
          e.preventDefault()
          const { tokenUrl, clientId, clientSecret, scope, audience } = oauth
          patch({ oauth: { tokenUrl, clientId, clientSecret, scope: optional(scope), audience: optional(audience) } }, 'OAuth saved',
            () => setOauth({ tokenUrl: '', clientId: '', clientSecret: '', scope: '', audience: '' }))
        }}>
          <div class='filters'>
            <Field label='Token URL'><input name='oauth-token-url' type='url' required value={oauth.tokenUrl} onInput={(e) => setOauth({ ...oauth, tokenUrl: value(e) })} /></Field>
            <Field label='Client id'><input name='oauth-client-id' required value={oauth.clientId} onInput={(e) => setOauth({ ...oauth, clientId: value(e) })} /></Field>
            <Field label='Client secret'><input name='oauth-client-secret' type='password' autocomplete='off' required value={oauth.clientSecret} onInput={(e) => setOauth({ ...oauth, clientSecret: value(e) })} /></Field>
            <Field label='Scope (optional)'><input name='oauth-scope' value={oauth.scope} onInput={(e) => setOauth({ ...oauth, scope: value(e) })} /></Field>
            <Field label='Audience (optional)'><input name='oauth-audience' value={oauth.audience} onInput={(e) => setOauth({ ...oauth, audience: value(e) })} /></Field>
          </div>
          <div class='actions'>
            <button type='submit'>Save OAuth</button>
            {endpoint.oauth !== null && <button type='button' onClick={() => patch({ oauth: null }, 'OAuth removed', () => {})}>Remove</button>}
          </div>
        </form>
      )}
      {note !== null && <p role='status' class='ok'>{note}</p>}
      {error !== null && <ErrorNote error={error} />}
    </section>
  )
}

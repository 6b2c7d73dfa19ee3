import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { api } from '../api'
import { CopyButton, ErrorNote, Field } from '../components'
import type { Endpoint } from './endpoint-types'

/** How long the old secrets keep signing beside the new one; the server's default is a day. */
const GRACE = [['0', 'None: receivers must switch now'], ['3600', '1 hour'], ['86400', '24 hours'], ['604800', '7 days']] as const
const DEFAULT_GRACE = '86400'

/** A new endpoint's secret (an Ed25519 endpoint's public key), shown once where it was made, until dismissed. */
export function SecretOnce ({ secret, onClose, children }: { secret: string, onClose: () => void, children?: ComponentChildren }) {
  return (
    <div class='secret' role='status'>
      <p>{secret.startsWith('whpk_') ? 'The public key (Ed25519): copy it to the receiver, which verifies v1a signatures with it.' : 'The signing secret: copy it to the receiver.'}</p>
      <p class='actions'><code class='raw' data-testid='secret'>{secret}</code><CopyButton value={secret} label='Copy the secret' /></p>
      <div class='actions'><button type='button' onClick={onClose}>I have copied it</button>{children}</div>
    </div>
  )
}

/** Rotation asks first, with the grace period to choose, and only then makes a new secret. */
function RotateConfirm ({ onRotate, onCancel }: { onRotate: (graceSeconds: number) => void, onCancel: () => void }) {
  const [grace, setGrace] = useState<string>(DEFAULT_GRACE)
  return (
    <div role='alertdialog' aria-labelledby='rotate-text' class='confirm'>
      <p id='rotate-text'>Rotate the signing secret? The receiver needs the new one; the old one signs beside it only for the grace period.</p>
      <Field label='Grace period'>
        <select name='graceSeconds' value={grace} onChange={(e) => setGrace((e.target as HTMLSelectElement).value)}>
          {GRACE.map(([seconds, label]) => <option key={seconds} value={seconds}>{label}</option>)}
        </select>
      </Field>
      <div class='actions'>
        <button type='button' class='primary' onClick={() => onRotate(Number(grace))}>Rotate now</button>
        <button type='button' onClick={onCancel}>Cancel</button>
      </div>
    </div>
  )
}

/** An Ed25519 endpoint's public key: nothing secret, always shown; rotated like a secret. */
function PublicKey ({ endpoint, onRotate }: { endpoint: Endpoint, onRotate: () => void }) {
  const key = endpoint.publicKey ?? ''
  return (
    <>
      <p class='muted'>Deliveries are signed with Ed25519 (Standard Webhooks v1a); your receiver verifies them with this public key. The signing key never leaves Anvil.</p>
      <p class='actions'><code class='raw' data-testid='public-key'>{key}</code><CopyButton value={key} label='Copy the public key' />
        <button type='button' onClick={onRotate}>Rotate key…</button></p>
    </>
  )
}

/** The signing secret: hidden until revealed, copied, rotated with a grace period; the outcome shows here. */
export function SecretSection ({ endpoint, onChanged }: { endpoint: Endpoint, onChanged: () => void }) {
  const [secret, setSecret] = useState<string | null>(null)
  const [rotating, setRotating] = useState(false)
  const [note, setNote] = useState<string | null>(null)
  const [error, setError] = useState<Error | null>(null)
  const path = `/endpoints/${encodeURIComponent(endpoint.id)}`
  const reveal = (): void => {
    setError(null)
    api<{ secret: string }>('GET', `${path}/secret`).then(({ secret }) => setSecret(secret), setError)
  }
  const rotate = (graceSeconds: number): void => {
    setRotating(false); setError(null); setNote(null)
    api<{ secret: string }>('POST', `${path}/rotate-secret`, { graceSeconds }).then(({ secret }) => {
      if (endpoint.signing !== 'ed25519') setSecret(secret)
      const what = endpoint.signing === 'ed25519' ? 'Key' : 'Secret'
      setNote(graceSeconds === 0 ? `${what} rotated: the old one no longer signs.` : `${what} rotated: the old one signs beside it for the grace period.`)
      onChanged()
    }, setError)
  }
  const ed25519 = endpoint.signing === 'ed25519'
  return (
    <section aria-labelledby='secret-title' class='panel'>
      <h2 id='secret-title'>{ed25519 ? 'Public key' : 'Signing secret'}</h2>
      {ed25519 && !rotating && <PublicKey endpoint={endpoint} onRotate={() => setRotating(true)} />}
      {!ed25519 && <p class='muted'>Your receiver checks each delivery's signature with it (Standard Webhooks).</p>}
      {!ed25519 && <p class='actions'>
        {secret === null
          ? <><code class='masked' aria-label='Hidden secret'>whsec_••••••••••••••••</code><button type='button' onClick={reveal}>Reveal</button></>
          : <><code class='raw' data-testid='secret'>{secret}</code><CopyButton value={secret} label='Copy the secret' /><button type='button' onClick={() => setSecret(null)}>Hide</button></>}
        {!rotating && <button type='button' onClick={() => setRotating(true)} aria-expanded={rotating}>Rotate secret…</button>}
      </p>}
      {rotating && <RotateConfirm onRotate={rotate} onCancel={() => setRotating(false)} />}
      {note !== null && <p role='status' class='ok'>{note}</p>}
      {error !== null && <ErrorNote error={error} />}
    </section>
  )
}

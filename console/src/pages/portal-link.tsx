// The operator's "portal link for tenant …": mints a link to the tenant portal (`POST /portal/tokens`) and shows
// it, with a Copy button, to hand to the tenant. Only the link's `url` and expiry are read: what the link holds
// (a token, or a one-time code) is the server's business.
import { useState } from 'preact/hooks'
import { api, serves } from '../api'
import { CopyButton, ErrorNote, Field, Time } from '../components'

/** How long a link may open the portal; the server's default is an hour, its most 7 days. */
const VALIDITY = [['3600', '1 hour'], ['86400', '24 hours'], ['604800', '7 days']] as const

interface Minted { url: string, expiresAt: string }

/** A link for `tenant` (or one typed in): read-only or not, valid for a chosen time. Nothing without portal links. */
export function PortalLink ({ tenant: given }: { tenant?: string | undefined }) {
  const [open, setOpen] = useState(false)
  const [tenant, setTenant] = useState(given ?? '')
  const [ttl, setTtl] = useState<string>(VALIDITY[0][0])
  const [readOnly, setReadOnly] = useState(false)
  const [minted, setMinted] = useState<Minted | null>(null)
  const [error, setError] = useState<Error | null>(null)
  if (!serves('portal')) return null
  const name = given ?? tenant.trim()
  const mint = (e: Event): void => {
    e.preventDefault()
    setError(null); setMinted(null)
    api<Minted>('POST', '/portal/tokens', { tenant: name, ttlSeconds: Number(ttl), ...(readOnly ? { scopes: ['read'] } : {}) }).then(setMinted, setError)
  }
  if (!open) {
    return (
      <p class='actions'>
        <button type='button' onClick={() => setOpen(true)} aria-expanded='false'>{given === undefined ? 'Portal link for a tenant…' : `Portal link for tenant ${given}…`}</button>
      </p>
    )
  }
  return (
    <form class='panel' aria-label='Portal link' onSubmit={mint}>
      <h2>Portal link{given === undefined ? '' : ` for tenant ${given}`}</h2>
      <p class='muted'>The tenant's developers open it to manage their own endpoints (docs/portal.md). Anyone holding it acts for the tenant until it expires.</p>
      <div class='filters'>
        {given === undefined && <Field label='Tenant'><input name='tenant' required value={tenant} onInput={(e) => setTenant((e.target as HTMLInputElement).value)} /></Field>}
        <Field label='Valid for'>
          <select name='ttlSeconds' value={ttl} onChange={(e) => setTtl((e.target as HTMLSelectElement).value)}>
            {VALIDITY.map(([seconds, label]) => <option key={seconds} value={seconds}>{label}</option>)}
          </select>
        </Field>
        <label class='check'><input type='checkbox' name='readOnly' checked={readOnly} onChange={(e) => setReadOnly((e.target as HTMLInputElement).checked)} /> Read only</label>
        <button type='submit' class='primary'>Mint link</button>
        <button type='button' onClick={() => { setOpen(false); setMinted(null) }}>Close</button>
      </div>
      {minted !== null && (
        <div role='status' class='secret'>
          <p>The link for tenant {name}{readOnly ? ', read only' : ''}, valid until <Time value={minted.expiresAt} />:</p>
          <p class='actions'><code class='raw' data-testid='portal-link'>{minted.url}</code><CopyButton value={minted.url} label='Copy the link' /></p>
        </div>
      )}
      {error !== null && <ErrorNote error={error} />}
    </form>
  )
}

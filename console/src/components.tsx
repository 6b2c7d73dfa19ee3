import { Fragment, type ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { ApiError, serves } from './api'
import type { Loaded } from './use-api'

/** What a page says when its feature has no routes on this server. */
export const FEATURES = {
  journal: 'The event journal\'s routes are not served here: anvil serve always has them; an app of your own passes journalAdminRoutes to anvilAdmin\'s routes (docs/journal.md).',
  outbound: 'Outgoing webhooks are not configured on this server: give anvil serve and anvil worker ANVIL_DATABASE_URL (and run anvil migrate) to manage endpoints.'
} as const

export function NotConfigured ({ feature }: { feature: keyof typeof FEATURES }) {
  return <p class='notice' role='status' data-testid='not-configured'><strong>Not configured.</strong> {FEATURES[feature]}</p>
}

export function ErrorNote ({ error }: { error: Error }) {
  const code = error instanceof ApiError && error.code !== undefined ? ` (${error.code})` : ''
  return <p class='error' role='alert'>{error.message}{code}</p>
}

/** The states of a loaded resource: loading, not configured, an error, or the content. */
export function Loading<T> ({ loaded, feature, children }: { loaded: Loaded<T>, feature: keyof typeof FEATURES, children: (data: T) => ComponentChildren }) {
  if (!serves(feature)) return <NotConfigured feature={feature} />
  if (loaded.error !== undefined) return <ErrorNote error={loaded.error} />
  if (loaded.data === undefined) return <p aria-busy='true'>Loading…</p>
  return <>{children(loaded.data)}</>
}

/** A count and its noun, singular for exactly one: `plural(1, 'endpoint')` is "1 endpoint". */
export function plural (count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`
}

/** Short enough for a table column: the year only when it is not this one (the full time in the title). */
const THIS_YEAR = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit' })
const OTHER_YEAR = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })

export function Time ({ value }: { value: string | null | undefined }) {
  if (value === null || value === undefined) return <span>—</span>
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) return <time dateTime={value}>{value}</time>
  const format = date.getFullYear() === new Date().getFullYear() ? THIS_YEAR : OTHER_YEAR
  return <time dateTime={value} title={value}>{format.format(date)}</time>
}

/** Each status has one of four tones (ok, bad, busy, idle), whose colours pass WCAG AA contrast. */
const TONES: Record<string, string> = {
  done: 'ok', success: 'ok', dispatched: 'ok', failed: 'bad', dead: 'bad', started: 'busy', processing: 'busy', pending: 'busy'
}

export function Status ({ value }: { value: string | null | undefined }) {
  return <span class={`status tone-${TONES[String(value)] ?? 'idle'}`}>{value ?? '—'}</span>
}

/**
 * An id, in one piece where it fits; where it does not (a 53-character `op_exhausted_…` on a phone), only after an
 * underscore of its prefix, never inside a part. `raw` values (payloads, headers) are the only text that may break anywhere.
 */
export function Id ({ value }: { value: string }) {
  const parts = value.split(/(?<=_)(?=.)/)
  return <code class='id'>{parts.map((part, i) => <Fragment key={i}>{i > 0 && <wbr />}<span>{part}</span></Fragment>)}</code>
}

/** Where a URL may break when it must: after a `/` of its path, before `.`, `?`, `&`, `=` and `#` (never inside a name). */
const URL_BREAKS = /(?<=\/)(?=[^/])|(?=[.?&=#])/

/** A URL as text, in one piece where it fits and broken only at its separators where it does not. */
export function Url ({ value }: { value: string }) {
  const parts = value.split(URL_BREAKS)
  // Each part whole: a browser would otherwise break after a hyphen inside a name (`acme-crm`).
  return <span class='url'>{parts.map((part, i) => <Fragment key={i}>{i > 0 && <wbr />}<span>{part}</span></Fragment>)}</span>
}

/** A dedupe key (sha256 hex) is the journal's id of an event its provider gave no id: no one looks for it by eye. */
const DEDUPE_KEY = /^[0-9a-f]{64}$/
export const hasProviderId = (journalId: string): boolean => !DEDUPE_KEY.test(journalId)

/** The provider's event id, or that there is none (the key in full on hover). */
export function EventId ({ id }: { id: string }) {
  return hasProviderId(id) ? <Id value={id} /> : <span class='muted' title={`Journal key ${id}`}>none</span>
}

/** Copies `value` to the clipboard and says so; the value stays on the page to select by hand if the browser refuses. */
export function CopyButton ({ value, label }: { value: string, label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'refused'>('idle')
  const copy = (): void => { navigator.clipboard.writeText(value).then(() => setState('copied'), () => setState('refused')) }
  return (
    <>
      <button type='button' onClick={copy} aria-label={label}>Copy</button>
      {state !== 'idle' && <span role='status' class={state === 'copied' ? 'ok' : 'error'}>{state === 'copied' ? 'Copied' : 'The browser refused: select it and copy'}</span>}
    </>
  )
}

/** Any value as text: strings as they are, the rest as JSON. Never markup. */
export function text (value: unknown): string {
  if (value === undefined || value === null) return '—'
  return typeof value === 'string' ? value : JSON.stringify(value)
}

export function Field ({ label, children }: { label: string, children: ComponentChildren }) {
  return <label class='field'><span>{label}</span>{children}</label>
}

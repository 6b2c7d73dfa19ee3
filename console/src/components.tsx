import type { ComponentChildren } from 'preact'
import { ApiError } from './api'
import type { Loaded } from './use-api'

/** What a page says when its feature has no routes on this server. */
export const FEATURES = {
  journal: 'The event journal is not configured on this server: give anvil serve and anvil worker ANVIL_DATABASE_URL (and run anvil migrate) to record events.',
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
  if (loaded.error instanceof ApiError && loaded.error.notConfigured) return <NotConfigured feature={feature} />
  if (loaded.error !== undefined) return <ErrorNote error={loaded.error} />
  if (loaded.data === undefined) return <p aria-busy='true'>Loading…</p>
  return <>{children(loaded.data)}</>
}

export function Time ({ value }: { value: string | null | undefined }) {
  if (value === null || value === undefined) return <span>—</span>
  const date = new Date(value)
  return <time dateTime={value} title={value}>{Number.isNaN(date.getTime()) ? value : date.toLocaleString()}</time>
}

export function Status ({ value }: { value: string | null | undefined }) {
  return <span class={`status status-${String(value)}`}>{value ?? '—'}</span>
}

/** Any value as text: strings as they are, the rest as JSON. Never markup. */
export function text (value: unknown): string {
  if (value === undefined || value === null) return '—'
  return typeof value === 'string' ? value : JSON.stringify(value)
}

export function Field ({ label, children }: { label: string, children: ComponentChildren }) {
  return <label class='field'><span>{label}</span>{children}</label>
}

import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { onLoggedOut, setBearer } from '../api'
import { href, useRoute, type Route } from '../router'
import { ScopeContext, WriteContext } from '../scope'
import { Endpoints } from '../pages/endpoints'
import { EndpointPage } from '../pages/endpoint-page'
import { applyTheme, type PortalTheme } from '../theme'
import { postHeight } from '../embed'
import { Deliveries } from '../pages/deliveries'
import { MessagePage } from '../pages/message'
import { VerifyPage } from '../pages/verify-snippets'
import { Time } from '../components'
import { EventTypeCatalog } from '../catalog'
import { useApi } from '../use-api'
import { forgetToken, openSession, takeCode, type Access } from './portal-token'
import '../style.css'

// Out of the address bar before the first render; exchanged for the session once the page runs.
const code = takeCode()

const NAV = [['/', 'Endpoints'], ['/deliveries', 'Deliveries'], ['/event-types', 'Event types'], ['/verify', 'Verify in your code']] as const

/** The catalog an endpoint subscribes from, each type with the JSON Schema of its data (the console's list). */
function EventTypes () {
  return (
    <>
      <h1>Event types</h1>
      <p>What your endpoints can receive, each with the JSON Schema its data fits.</p>
      <EventTypeCatalog empty='No event type is listed yet: an endpoint with none checked receives every type.' />
    </>
  )
}

function Page ({ route }: { route: Route }) {
  const message = /^\/messages\/(.+)$/.exec(route.path)
  if (message !== null) return <MessagePage id={decodeURIComponent(message[1] as string)} />
  const endpoint = /^\/endpoints\/(.+)$/.exec(route.path)
  if (endpoint !== null) return <EndpointPage key={endpoint[1]} id={decodeURIComponent(endpoint[1] as string)} />
  switch (route.path) {
    case '/deliveries': return <Deliveries route={route} />
    case '/event-types': return <EventTypes />
    case '/verify': return <VerifyPage />
    default: return <Endpoints route={route} />
  }
}

const REFUSED = {
  expired: ['This link has expired', 'The link that opened this page has expired or was revoked. Open the webhook settings of your account again for a new one.'],
  used: ['This link was used', 'A link opens this page once, and this one has been opened already. Open the webhook settings of your account again for a new one.'],
  none: ['No access link', 'This page opens from a link in the webhook settings of your account; it has no login of its own.']
} as const

/** No token, a used link, or a token the server no longer takes: a page that says what to do, not a broken one. */
function NoAccess ({ why, route }: { why: keyof typeof REFUSED, route: Route }) {
  // A link from an operational event (`#/endpoints/ep_…`) names the endpoint it was about.
  const endpoint = /^\/endpoints\/(.+)$/.exec(route.path)?.[1]
  const [title, text] = REFUSED[why]
  return (
    <main class='login' id='main'>
      <h1>{title}</h1>
      <p role='alert' data-testid='no-access'>{text}</p>
      {endpoint !== undefined && <p>Then open endpoint <code class='id'>{decodeURIComponent(endpoint)}</code> under Endpoints.</p>}
    </main>
  )
}

interface Session { tenant: string | null, scopes: string[], expiresAt: string | null, theme: PortalTheme, embed: boolean, frameAncestors: string[] }

/** Whose page this is, and until when, as the server reads the token (`GET <prefix>/portal/session`). */
function Who ({ session }: { session: Session | undefined }) {
  if (session?.tenant == null) return null
  const readOnly = !session.scopes.includes('write')
  return <span data-testid='tenant'>{session.tenant}{readOnly ? ' (read only)' : ''} · link valid until <Time value={session.expiresAt} /></span>
}

function Portal () {
  const route = useRoute()
  const [access, setAccess] = useState<Access | null>(null)
  useEffect(() => {
    openSession(code).then((opened) => { if ('token' in opened) setBearer(opened.token); setAccess(opened) },
      () => setAccess({ refused: 'expired' }))
  }, [])
  const session = useApi<Session>(access !== null && 'token' in access ? '/portal/session' : null)
  useEffect(() => onLoggedOut(() => { forgetToken(); setBearer(null); setAccess({ refused: 'expired' }) }), [])
  const theme = session.data?.theme
  useEffect(() => applyTheme(theme), [theme])
  const embed = session.data?.embed === true
  useEffect(() => embed ? postHeight(session.data?.frameAncestors ?? []) : undefined, [embed])
  if (access !== null && 'refused' in access) return <NoAccess why={access.refused} route={route} />
  if (session.data === undefined) return <p aria-busy='true' class='loading'>Loading…</p>
  // A message is reached from the delivery log: its section is Deliveries; an endpoint's page is under Endpoints.
  const section = route.path.startsWith('/messages/') ? '/deliveries' : route.path.startsWith('/endpoints') ? '/' : '/' + (route.path.split('/')[1] ?? '')
  const nav = (
    <nav aria-label='Sections'>
      {NAV.map(([path, label]) => <a key={path} href={href(path)} aria-current={section === path ? 'page' : undefined}>{label}</a>)}
    </nav>
  )
  return (
    <ScopeContext.Provider value='tenant'><WriteContext.Provider value={session.data?.scopes.includes('write') !== false}>
      {embed
        // In the product's own frame: no bar of its own, only the sections as tabs.
        ? <div class='tabs'>{nav}<Who session={session.data} /></div>
        : (
          <header>
            <a class='skip' href='#main'>Skip to content</a>
            {theme?.logoUrl !== undefined ? <img class='logo' src={theme.logoUrl} alt='' /> : null}
            <strong class='brand'>Webhooks</strong>
            {nav}
            <Who session={session.data} />
          </header>
          )}
      <main id='main' tabIndex={-1} class={embed ? 'embedded' : undefined}><Page route={route} /></main>
    </WriteContext.Provider></ScopeContext.Provider>
  )
}

render(<Portal />, document.getElementById('app') as HTMLElement)

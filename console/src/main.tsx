import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, onLoggedOut, serves, setCsrf, setFeatures } from './api'
import type { Features, SessionState } from '../../plugins/admin/session-state'
import { href, useRoute, type Route } from './router'
import { Login } from './pages/login'
import { Overview } from './pages/overview'
import { Events } from './pages/events'
import { EventPage } from './pages/event'
import { DeadLetters } from './pages/dead-letters'
import { Endpoints, OperationalEndpoints } from './pages/endpoints'
import { Deliveries } from './pages/deliveries'
import { UndeliveredPage } from './pages/undelivered'
import { MessagePage } from './pages/message'
import { EndpointPage } from './pages/endpoint-page'
import { EventTypesPage } from './pages/event-types'

import './style.css'

type Feature = keyof Features

/** The sections, each shown only when the server has its feature (the overview says what it lacks). */
const NAV: ReadonlyArray<readonly [string, string, Feature?]> = [
  ['/', 'Overview'], ['/events', 'Events', 'journal'], ['/dead-letters', 'Dead letters', 'journal'], ['/endpoints', 'Endpoints', 'outbound'],
  ['/operational-endpoints', 'Operational', 'outbound'], ['/deliveries', 'Deliveries', 'outbound'], ['/undelivered', 'Undelivered', 'outbound'],
  ['/event-types', 'Event types', 'outbound']
]

function Page ({ route }: { route: Route }) {
  const event = /^\/events\/(.+)$/.exec(route.path)
  if (event !== null && event[1] !== 'replay') return <EventPage id={decodeURIComponent(event[1] as string)} />
  const message = /^\/messages\/(.+)$/.exec(route.path)
  if (message !== null) return <MessagePage id={decodeURIComponent(message[1] as string)} />
  const endpoint = /^\/endpoints\/(.+)$/.exec(route.path)
  if (endpoint !== null) return <EndpointPage key={endpoint[1]} id={decodeURIComponent(endpoint[1] as string)} />
  switch (route.path) {
    case '/events': return <Events route={route} />
    case '/dead-letters': return <DeadLetters route={route} />
    case '/endpoints': return <Endpoints route={route} />
    case '/operational-endpoints': return <OperationalEndpoints />
    case '/deliveries': return <Deliveries route={route} />
    case '/undelivered': return <UndeliveredPage />
    case '/event-types': return <EventTypesPage />
    default: return <Overview />
  }
}

function App () {
  const route = useRoute()
  const [session, setSession] = useState<'unknown' | 'in' | 'out'>('unknown')
  // A page reloaded within a session asks for its CSRF token again (the cookie itself is HttpOnly), and a session
  // learns which features the server has. The probe answers 200 logged out too, so a first visit logs no failed request.
  const probe = (): void => {
    api<SessionState>('GET', '/session/state').then(
      (answer) => { setCsrf(answer.csrfToken); setFeatures(answer.features); setSession(answer.authenticated ? 'in' : 'out') },
      () => setSession('out')
    )
  }
  useEffect(() => {
    probe()
    return onLoggedOut(() => { setCsrf(null); setSession('out') })
  }, [])
  if (session === 'unknown') return <p aria-busy='true'>Loading…</p>
  if (session === 'out') return <Login onLogin={probe} />
  const section = '/' + (route.path.split('/')[1] ?? '')
  // Log out ends this session on the server; everywhere ends every session (a lost laptop, a shared screen).
  const logout = (path: '/session' | '/sessions'): void => { api('DELETE', path).finally(() => { setCsrf(null); setSession('out') }) }
  return (
    <>
      <header>
        <a class='skip' href='#main'>Skip to content</a>
        <strong class='brand'>Anvil</strong>
        <nav aria-label='Sections'>
          {NAV.filter(([, , feature]) => feature === undefined || serves(feature)).map(([path, label]) =>
            <a key={path} href={href(path)} aria-current={section === path ? 'page' : undefined}>{label}</a>)}
        </nav>
        <button type='button' onClick={() => logout('/session')}>Log out</button>
        <button type='button' onClick={() => logout('/sessions')}>Log out everywhere</button>
      </header>
      <main id='main' tabIndex={-1}><Page route={route} /></main>
    </>
  )
}

// The console follows the system's light or dark mode (the portal takes its link's theme instead): style.css's
// dark tokens apply under data-theme='dark'.
const darkMode = matchMedia('(prefers-color-scheme: dark)')
const followMode = (): void => { document.documentElement.dataset.theme = darkMode.matches ? 'dark' : 'light' }
followMode()
darkMode.addEventListener('change', followMode)

render(<App />, document.getElementById('app') as HTMLElement)

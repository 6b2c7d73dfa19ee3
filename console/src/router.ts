// Hash routes (`#/events?status=failed`): the page and its filter live in the URL, so a link can be shared,
// and the server serves one index.html.
import { useEffect, useState } from 'preact/hooks'

export interface Route { path: string, params: URLSearchParams }

function current (): Route {
  const hash = location.hash.replace(/^#/, '') || '/'
  const [path = '/', search = ''] = hash.split('?', 2)
  return { path, params: new URLSearchParams(search) }
}

export function useRoute (): Route {
  const [route, setRoute] = useState(current)
  useEffect(() => {
    const update = (): void => setRoute(current())
    addEventListener('hashchange', update)
    return () => removeEventListener('hashchange', update)
  }, [])
  return route
}

export function href (path: string, params: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, value)
  const text = search.toString()
  return `#${path}${text === '' ? '' : `?${text}`}`
}

export function navigate (path: string, params: Record<string, string | undefined> = {}): void {
  location.hash = href(path, params)
}

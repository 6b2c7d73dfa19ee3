// The portal's link carries a one-time code in its fragment (`#code=anvil_pl_…`), which browsers never send to a
// server. It leaves the address bar before the first render (history.replaceState) and is exchanged once
// (`POST <prefix>/portal/session`) for this tab's session token, kept in memory and in the tab's sessionStorage, so
// a reload works; the token is sent as a Bearer header, never as a cookie. The browser's history may keep the link,
// but a used code opens nothing: the link opened again says it was used.
import { ADMIN_BASE } from '../api'

const KEY = 'anvil-portal-token'

/** What the page opens with: a session token, no link at all, or a link the server refused. */
export type Access = { token: string } | { refused: 'used' | 'expired' | 'none' }

function stored (): string | null {
  try { return sessionStorage.getItem(KEY) } catch { return null } // storage refused (some framed contexts): memory only
}

/** The link's code, taken out of the URL at once (call it before the first render); null without one. */
export function takeCode (): string | null {
  const match = /^#(?:.*&)?code=([^&]+)/.exec(location.hash)
  if (match === null) return null
  history.replaceState(null, '', `${location.pathname}${location.search}#/`)
  return decodeURIComponent(match[1] as string)
}

/** The session: the code exchanged (its token then stored for this tab), else the one this tab stored. */
export async function openSession (code: string | null): Promise<Access> {
  if (code === null) {
    const token = stored()
    return token === null ? { refused: 'none' } : { token }
  }
  const response = await fetch(`${ADMIN_BASE}/portal/session`, {
    method: 'POST', credentials: 'omit', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code })
  })
  if (response.status === 410) return { refused: 'used' }
  if (!response.ok) return { refused: 'expired' }
  const { token } = await response.json() as { token: string }
  try { sessionStorage.setItem(KEY, token) } catch {}
  return { token }
}

/** An expired or revoked token is dropped: a reload then says there is no link, instead of failing again. */
export function forgetToken (): void {
  try { sessionStorage.removeItem(KEY) } catch {}
}

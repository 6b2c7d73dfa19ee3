// The portal's token arrives in the URL's fragment (`#token=…`), which browsers never send to a server. It leaves
// the URL at once (history.replaceState: not in the address bar, the history or a screenshot) and is kept in this
// tab's sessionStorage, so a reload works; it is sent as a Bearer header, never as a cookie.
const KEY = 'anvil-portal-token'

function stored (): string | null {
  try { return sessionStorage.getItem(KEY) } catch { return null } // storage refused (some framed contexts): memory only
}

/** The token of the URL (which replaces a stored one), or the one this tab stored; null without either. */
export function takeToken (): string | null {
  const match = /^#(?:.*&)?token=([^&]+)/.exec(location.hash)
  if (match === null) return stored()
  const token = decodeURIComponent(match[1] as string)
  try { sessionStorage.setItem(KEY, token) } catch {}
  history.replaceState(null, '', `${location.pathname}${location.search}#/`)
  return token
}

/** An expired or revoked token is dropped: a reload then says there is no link, instead of failing again. */
export function forgetToken (): void {
  try { sessionStorage.removeItem(KEY) } catch {}
}


/**
 * A URL fit for a message: as typed without credentials, else with them hidden, parsed (`user:***@`; a lone
 * name may be the password) or not (a seed list, a slash too few: all before the last `@`).
 */
export function redactUrl (url: string): string {
  let parsed: URL | undefined
  try { parsed = new URL(url) } catch {}
  if (parsed !== undefined && parsed.host !== '') {
    if (parsed.password !== '') parsed.password = '***'
    else if (parsed.username !== '') parsed.username = '***'
    else return url
    return parsed.toString()
  }
  const at = url.lastIndexOf('@')
  if (at === -1) return parsed === undefined ? '<unparseable>' : url
  const scheme = /^[a-z][a-z0-9+.-]*:\/*/i.exec(url)?.[0] ?? ''
  return `${scheme}***${url.slice(at)}`
}

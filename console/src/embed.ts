// An embedded portal (a link minted with `embed: true`) tells its parent how tall it is, so the host sizes the
// frame and has no scrollbar of its own: `{ type: 'anvil-portal:resize', height }`, posted only to the parent's
// origin, and only when that origin is one `portal.frameAncestors` allows.

export const RESIZE_MESSAGE = 'anvil-portal:resize'

/** Does `origin` match a CSP frame-ancestors source (`https://app.example`, `https://*.example`, `'self'`)? */
export function allowedOrigin (origin: string, sources: readonly string[]): boolean {
  return sources.some((source) => {
    if (source === "'self'") return origin === location.origin
    if (!source.includes('*')) return origin === source
    const [scheme, rest] = source.split('://*.') as [string, string]
    return origin.startsWith(`${scheme}://`) && origin.endsWith(`.${rest}`) && !origin.slice(scheme.length + 3, -rest.length - 1).includes('/')
  })
}

/** The parent's origin, as the browser tells it (ancestorOrigins in Chromium, the referrer's origin elsewhere). */
function parentOrigin (): string | undefined {
  const ancestors = (location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins
  if (ancestors !== undefined && ancestors.length > 0) return ancestors[0] ?? undefined
  try { return document.referrer === '' ? undefined : new URL(document.referrer).origin } catch { return undefined }
}

/** Starts posting the page's height to an allowed parent; returns the stop. Nothing is posted outside a frame. */
export function postHeight (sources: readonly string[]): () => void {
  if (window.parent === window) return () => {}
  const origin = parentOrigin()
  if (origin === undefined || !allowedOrigin(origin, sources)) return () => {}
  let last = -1
  const post = (): void => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height)
    if (height === last) return
    last = height
    // targetOrigin: the browser delivers it only if the parent really is at that origin.
    window.parent.postMessage({ type: RESIZE_MESSAGE, height }, origin)
  }
  const observer = new ResizeObserver(post)
  observer.observe(document.documentElement)
  post()
  return () => observer.disconnect()
}

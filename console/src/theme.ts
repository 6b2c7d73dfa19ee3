// A portal link's look (src/portal/portal-theme.ts): the server checked each value; the page still applies them
// only as CSS custom properties (CSSOM, allowed by the strict CSP) and an image's src, never as CSS text.
import type { PortalTheme } from '../../src/portal/portal-theme'

export type { PortalTheme }

const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i

/** WCAG relative luminance of a `#rgb`/`#rrggbb` colour. */
export function luminance (hex: string): number {
  const full = hex.length === 4 ? hex.replace(/[0-9a-f]/gi, (c) => c + c) : hex
  const channel = (i: number): number => {
    const c = parseInt(full.slice(1 + 2 * i, 3 + 2 * i), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2)
}

export const contrast = (a: string, b: string): number => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}

/** Black or white, whichever reads better on `background`: text on the primary colour always passes AA when either can. */
export const inkOn = (background: string): string => contrast(background, '#000000') >= contrast(background, '#ffffff') ? '#000000' : '#ffffff'

export function applyTheme (theme: PortalTheme | undefined): void {
  const root = document.documentElement
  root.dataset.theme = theme?.mode === 'dark' ? 'dark' : 'light'
  if (theme?.primaryColor !== undefined && HEX.test(theme.primaryColor)) {
    root.style.setProperty('--primary', theme.primaryColor)
    root.style.setProperty('--on-primary', inkOn(theme.primaryColor))
  }
  if (theme?.fontFamily !== undefined) root.style.setProperty('--font', theme.fontFamily)
}

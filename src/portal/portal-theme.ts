/**
 * A portal's look, chosen by the operator (`portal.theme`) or per link (`POST <prefix>/portal/tokens`): light or
 * dark, a primary colour, a font and a logo. Each value is checked to be what it says (a hex colour, a list of
 * font family names, an https URL) and the page applies it as a CSS custom property or an image's `src`, never as
 * CSS text, so no value can carry a rule, a `url()` or markup.
 */
import { Type, type Static } from '@sinclair/typebox'

/** `#rgb` or `#rrggbb`. */
export const COLOR_PATTERN = '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$'
/** Family names, plain (`Inter`, `system-ui`) or quoted (`"Open Sans"`), separated by commas; nothing else. */
const FAMILY = `(?:[A-Za-z][A-Za-z0-9 -]{0,62}|"[A-Za-z0-9 -]{1,62}"|'[A-Za-z0-9 -]{1,62}')`
export const FONT_FAMILY_PATTERN = `^\\s*${FAMILY}(\\s*,\\s*${FAMILY}){0,7}\\s*$`
/** An https URL with no quote, space, bracket or backslash (it becomes an image's `src`, nothing else). */
export const LOGO_URL_PATTERN = '^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\\s"\'()<>\\\\]*)?$'

export const PortalThemeSchema = Type.Object({
  /** @defaultValue `'light'` */
  mode: Type.Optional(Type.Union([Type.Literal('light'), Type.Literal('dark')])),
  /** Buttons, links' focus and the selected section: a hex colour; text on it is black or white, whichever reads. @defaultValue Anvil's blue */
  primaryColor: Type.Optional(Type.String({ pattern: COLOR_PATTERN, errorMessage: 'must be a hex colour such as #4f46e5' })),
  /** A CSS font family list such as `Inter, system-ui, sans-serif`. @defaultValue the system's UI font */
  fontFamily: Type.Optional(Type.String({
    pattern: FONT_FAMILY_PATTERN, maxLength: 200, errorMessage: 'must be font family names separated by commas, such as Inter, system-ui, sans-serif'
  })),
  /** Shown at the top of the portal (not when embedded): an https URL. @defaultValue none */
  logoUrl: Type.Optional(Type.String({ pattern: LOGO_URL_PATTERN, maxLength: 500, errorMessage: 'must be an https URL' }))
}, { additionalProperties: false })

export type PortalTheme = Static<typeof PortalThemeSchema>

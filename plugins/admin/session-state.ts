/**
 * What the console's session probe and login answer: TypeBox alone, so the console (console/src) takes these
 * very types (`import type`) instead of declaring its own.
 */
import { Type, type Static } from '@sinclair/typebox'

export const SessionAnswerSchema = Type.Object({ csrfToken: Type.Union([Type.String(), Type.Null()]), expiresAt: Type.Union([Type.String(), Type.Null()]) })
export type SessionAnswer = Static<typeof SessionAnswerSchema>

/** Which route families this admin API serves; the console says "not configured" for the others. */
export const FeaturesSchema = Type.Object({
  /** The journal's routes (`/events`, `/stats`, `/dead-letters`): route-families.ts lists each family's. */
  journal: Type.Boolean(),
  /** The outgoing webhooks' routes (`/endpoints`, `/deliveries`, `/messages`, …). */
  outbound: Type.Boolean(),
  /** Portal links (`POST /portal/tokens`). */
  portal: Type.Boolean()
})
export type Features = Static<typeof FeaturesSchema>

/** `features` only to a session: a stranger learns nothing of the server's set-up. */
export const SessionStateSchema = Type.Composite([
  Type.Object({ authenticated: Type.Boolean(), features: Type.Optional(FeaturesSchema) }), SessionAnswerSchema
])
export type SessionState = Static<typeof SessionStateSchema>

/**
 * The admin API's route families, each by the paths its routes begin with: the session probe reports which the
 * server has (by its first route), and the console asks only for those. No imports: the console bundles it.
 */
export const ROUTE_FAMILIES = {
  /** The event journal (or the dead letters in Redis): `journalAdminRoutes`. */
  journal: ['/events', '/stats', '/dead-letters'],
  /** Outgoing webhooks: `anvilOutbound`'s service. */
  outbound: ['/endpoints', '/endpoint-stats', '/deliveries', '/messages', '/undelivered', '/outbox', '/event-types', '/operational-endpoints'],
  /** Portal links: on when the admin API has a database for their revocations. */
  portal: ['/portal/tokens', '/portal/tenants']
} as const

export type RouteFamily = keyof typeof ROUTE_FAMILIES

/** The family whose routes `path` (`/endpoints/ep_1/stats?hours=24`) is of, if any. */
export function familyOf (path: string): RouteFamily | undefined {
  const bare = path.split('?', 1)[0] ?? path
  return (Object.keys(ROUTE_FAMILIES) as RouteFamily[])
    .find((family) => ROUTE_FAMILIES[family].some((prefix) => bare === prefix || bare.startsWith(`${prefix}/`)))
}

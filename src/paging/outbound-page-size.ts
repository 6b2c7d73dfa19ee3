import { pageSize } from './page.js'

/** A resend page enqueues every message it lists, so the page bounds one request's writes to Redis. */
export const OUTBOUND_MAX_PAGE = 200

/** The size of an outbound list's page (endpoints, deliveries, resends). */
export const outboundPageSize = (limit: number | undefined): number => pageSize(limit, OUTBOUND_MAX_PAGE)

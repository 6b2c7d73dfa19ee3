/**
 * Portal links: a link carries a one-time code (`anvil_pl_…`), never a token, so what the browser's history and its
 * address-bar suggestions keep of it opens nothing once the page has opened. The page exchanges the code
 * (`POST <prefix>/portal/session`) for a session token of the same tenant, scopes, look and expiry, which it holds in
 * the tab; a second exchange answers `ANVIL_ERR_PORTAL_LINK_USED`. Codes are kept as their SHA-256 (migration 0019).
 */
import { createHash, randomBytes, type KeyObject } from 'node:crypto'
import type { Database } from '../db/database.js'
import { errors, WRONG_PORTAL_LINK } from '../shared/errors.js'
import * as sql from '../sql/portal.js'
import { mintPortalToken, type MintInput, type PortalClaims } from './portal-token.js'
import type { PortalRevocations } from './portal-revocations.js'

export const PORTAL_CODE_PREFIX = 'anvil_pl_'
const CODE_SHAPE = /^anvil_pl_[A-Za-z0-9_-]{43}$/
/** Every this many links minted, a process deletes the codes a day past their expiry, this many at most. */
const PRUNE_EVERY = 100
const PRUNE_BATCH = 1000

const codeHash = (code: string): string => createHash('sha256').update(code).digest('base64url')

export type PortalLinks = ReturnType<typeof createPortalLinks>

export function createPortalLinks (db: Database, key: KeyObject, revocations: PortalRevocations) {
  let minted = 0
  return {
    /** A bearer token for API use and, apart from it, a link's one-time code, both for `input`'s claims. */
    async mint (input: MintInput): Promise<{ token: string, code: string, claims: PortalClaims }> {
      const { token, claims } = mintPortalToken(key, input)
      const code = PORTAL_CODE_PREFIX + randomBytes(32).toString('base64url')
      await db.pool.query(sql.insertLinkCode(db.schema), [codeHash(code), JSON.stringify(claims), new Date(claims.exp)])
      if (++minted % PRUNE_EVERY === 0) void db.pool.query(sql.pruneLinkCodes(db.schema), [PRUNE_BATCH]).catch(() => {})
      return { token, code, claims }
    },

    /**
     * The session a link's code opens, once: a token issued now with the link's claims and expiry (so a revocation
     * covers it). A spent code is 410 `ANVIL_ERR_PORTAL_LINK_USED`; an unknown, expired or revoked one 401.
     */
    async exchange (code: string, now = Date.now()): Promise<{ token: string, claims: PortalClaims }> {
      if (!CODE_SHAPE.test(code)) throw new errors.UNAUTHORIZED(WRONG_PORTAL_LINK)
      const hash = codeHash(code)
      const { rows } = await db.pool.query<{ claims: PortalClaims }>(sql.useLinkCode(db.schema), [hash])
      const link = rows[0]?.claims
      if (link === undefined) {
        const state = (await db.pool.query<{ used: boolean }>(sql.linkCodeState(db.schema), [hash])).rows[0]
        throw state?.used === true ? new errors.PORTAL_LINK_USED() : new errors.UNAUTHORIZED(WRONG_PORTAL_LINK)
      }
      if (await revocations.isRevoked(link)) throw new errors.UNAUTHORIZED(WRONG_PORTAL_LINK)
      const { tenant, scopes, theme, embed } = link
      return mintPortalToken(key, { tenant, scopes, ...(theme === undefined ? {} : { theme }), ...(embed === undefined ? {} : { embed }), ttlSeconds: (link.exp - now) / 1000 }, now)
    }
  }
}

import { createHash, createHmac, randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { SessionStore } from './session-store.js'
import { constantTimeEqual } from '../../src/signing/crypto.js'

export const SESSION_COOKIE = 'anvil_admin_session'
export const CSRF_HEADER = 'x-csrf-token'
/** A console session lasts a working day; then the token is asked for again. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000
/** Methods that change nothing: a session needs no CSRF token for them. */
export const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export interface Session { nonce: string, expiresAt: number }
export interface SessionAnswer { csrfToken: string | null, expiresAt: string | null }

/**
 * Secure when the browser reached us over https, directly or through a proxy that says so. A forged header
 * can only make the cookie Secure, which harms no one but the forger.
 */
const overHttps = (request: FastifyRequest): boolean => request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https'

const hmac = (key: Buffer | string, text: string): Buffer => createHmac('sha256', key).update(text, 'utf8').digest()

/** The store knows a session by a hash of its nonce: what the store holds cannot be sent back as a cookie. */
const storeId = (session: Session): string => createHash('sha256').update(session.nonce).digest('base64url')

/**
 * The console's sessions: the cookie holds an expiry and a random nonce, signed (@fastify/cookie) with a key
 * derived from the admin token, so changing the token ends every session; the store holds each open session,
 * so a logout (one, or every one) ends it on the server too. The CSRF token is an HMAC of the nonce: only a
 * page that read the login or session answer can send it.
 */
export class SessionKeys {
  readonly cookieSecret: Buffer
  private readonly csrfKey: Buffer

  constructor (token: string, readonly store: SessionStore) {
    this.cookieSecret = hmac(token, 'anvil admin session cookie')
    this.csrfKey = hmac(token, 'anvil admin csrf')
  }

  csrfFor (session: Session): string {
    return hmac(this.csrfKey, session.nonce).toString('base64url')
  }

  /** Opens a session in the store and sets its cookie on `reply`; the answer carries its CSRF token. */
  async open (request: FastifyRequest, reply: FastifyReply, path: string, now = Date.now()): Promise<SessionAnswer> {
    const session = { nonce: randomBytes(18).toString('base64url'), expiresAt: now + SESSION_TTL_MS }
    await this.store.open(storeId(session), session.expiresAt)
    reply.setCookie(SESSION_COOKIE, `${session.expiresAt}.${session.nonce}`, {
      path, httpOnly: true, sameSite: 'strict', secure: overHttps(request), signed: true, maxAge: SESSION_TTL_MS / 1000
    })
    return this.answer(session)
  }

  /** Ends the request's session in the store, if it has one, and clears its cookie. */
  async close (request: FastifyRequest, reply: FastifyReply, path: string): Promise<void> {
    const session = this.parse(request)
    if (session !== undefined) await this.store.end(storeId(session))
    reply.clearCookie(SESSION_COOKIE, { path, httpOnly: true, sameSite: 'strict' })
  }

  answer (session: Session): SessionAnswer {
    return { csrfToken: this.csrfFor(session), expiresAt: new Date(session.expiresAt).toISOString() }
  }

  /** The request's session: a cookie signed with this key, not expired and still open in the store, else undefined. */
  async read (request: FastifyRequest, now = Date.now()): Promise<Session | undefined> {
    const session = this.parse(request, now)
    return session !== undefined && await this.store.isOpen(storeId(session), now) ? session : undefined
  }

  /** The session the cookie names, signed with this key and not expired; whether it is still open is the store's to say. */
  parse (request: FastifyRequest, now = Date.now()): Session | undefined {
    const raw = request.cookies[SESSION_COOKIE]
    if (raw === undefined) return undefined
    const unsigned = request.unsignCookie(raw)
    if (!unsigned.valid || unsigned.value === null) return undefined
    const match = /^(\d{13})\.([A-Za-z0-9_-]{24})$/.exec(unsigned.value)
    if (match === null) return undefined
    const session = { expiresAt: Number(match[1]), nonce: match[2] as string }
    return session.expiresAt > now ? session : undefined
  }

  csrfMatches (session: Session, given: unknown): boolean {
    if (typeof given !== 'string') return false
    return constantTimeEqual(Buffer.from(this.csrfFor(session)), Buffer.from(given))
  }
}

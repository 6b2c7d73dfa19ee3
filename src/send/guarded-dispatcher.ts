/**
 * An undici Agent that refuses, at connection time, any address the SSRF policy refuses. The check runs
 * after DNS resolution, on every address the socket could use, so a name that resolves (or later
 * re-resolves) to a private address is still caught; the connected socket's peer is checked once more.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns'
import type { BlockList } from 'node:net'
import { Agent, buildConnector } from 'undici'
import { errors } from '../shared/errors.js'
import { blockListOf, splitNets } from './cidr.js'
import { isRefusedAddress, literalAddress } from './address-policy.js'

export interface GuardOptions {
  /** Networks reachable despite the policy (`127.0.0.0/8`, `10.1.0.0/16`). */
  allowNets?: string | readonly string[]
  /** Gives up connecting after this long. */
  connectTimeoutMs?: number
  /** Name resolution, `dns.lookup` by default (a test may point a name at an address of its choice). */
  lookup?: typeof dnsLookup
  /** An endpoint's mutual TLS: the CA its receiver must chain to (instead of the system's), the certificate and key it presents. */
  tls?: { ca?: string, cert?: string, key?: string }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

function refusal (host: string): Error {
  return new errors.OUTBOUND_ADDRESS_REFUSED(host)
}

/** A `lookup` for net.connect that fails when any address the name resolves to is refused. */
export function guardedLookup (allow: BlockList | undefined, resolve: typeof dnsLookup = dnsLookup) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) return callback(err, '')
      const list = addresses as unknown as LookupAddress[]
      if (list.length === 0 || list.some((entry) => isRefusedAddress(entry.address, allow))) return callback(refusal(hostname), '')
      if (options.all === true) return callback(null, list)
      const first = list[0] as LookupAddress
      callback(null, first.address, first.family)
    })
  }
}

/** The Agent every delivery goes through; redirects are never followed (undici's request does not). */
export function createGuardedDispatcher (options: GuardOptions = {}): Agent {
  const allow = options.allowNets === undefined ? undefined : blockListOf(splitNets(options.allowNets))
  const base = buildConnector({ ...options.tls, lookup: guardedLookup(allow, options.lookup), timeout: options.connectTimeoutMs } as buildConnector.BuildOptions)
  const connect: buildConnector.connector = (target, callback) => {
    // An IP literal never reaches `lookup`: it is checked here.
    const literal = literalAddress(target.hostname)
    if (literal !== undefined && isRefusedAddress(literal.address, allow)) {
      callback(refusal(target.hostname), null)
      return
    }
    base(target, (err, socket) => {
      if (err !== null) return callback(err, null)
      const peer = socket.remoteAddress
      if (peer === undefined || isRefusedAddress(peer, allow)) {
        socket.destroy()
        return callback(refusal(target.hostname), null)
      }
      callback(null, socket)
    })
  }
  return new Agent({ connect })
}

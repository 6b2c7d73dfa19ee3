/**
 * Which addresses an outgoing webhook may reach: none that is loopback, private, link-local (cloud metadata
 * included), CGNAT, reserved or IPv6 unique-local, unless the operator allowlisted its network. An IPv4 address
 * written as IPv6 (`::ffff:a.b.c.d` mapped, `::a.b.c.d` compatible) is no public receiver's address either.
 */
import { isIP, type BlockList } from 'node:net'
import { blockListOf, type AddressFamily } from './cidr.js'

/** Never a public webhook receiver (RFC 6890 special-purpose ranges). */
export const REFUSED_NETS: readonly string[] = Object.freeze([
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12',
  '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24',
  '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4',
  '::/96', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '2001::/32',
  '2001:db8::/32', '2002::/16', 'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8'
])

// ::/96 holds :: and ::1 and the IPv4-compatible forms. No ::ffff:0:0/96 rule: BlockList would match every IPv4
// address against it; mapped addresses are unmapped first and refused by isRefusedAddress.
const refused = blockListOf(REFUSED_NETS)

/** The eight 16-bit groups of a valid IPv6 address (an IPv4 tail counts as two). */
function ipv6Groups (address: string): number[] {
  let text = address
  const lastColon = text.lastIndexOf(':')
  const dotted = text.slice(lastColon + 1)
  if (isIP(dotted) === 4) {
    const [a, b, c, d] = dotted.split('.').map(Number) as [number, number, number, number]
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const parse = (part: string | undefined): number[] =>
    part === undefined || part === '' ? [] : part.split(':').map((group) => parseInt(group, 16))
  const [before, after] = text.split('::')
  const head = parse(before)
  const rest = parse(after)
  const gap = after === undefined ? [] : new Array<number>(8 - head.length - rest.length).fill(0)
  return [...head, ...gap, ...rest]
}

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as the IPv4 address it stands for. */
export function unmapIpv4 (address: string): string | undefined {
  if (isIP(address) !== 6) return undefined
  const groups = ipv6Groups(address)
  if (groups.length !== 8 || groups.slice(0, 5).some((group) => group !== 0) || groups[5] !== 0xffff) return undefined
  const high = groups[6] as number
  const low = groups[7] as number
  return [high >> 8, high & 255, low >> 8, low & 255].join('.')
}

/** The address without IPv6 brackets or a zone, and its family (a mapped one as IPv4); undefined for a host name. */
export function literalAddress (host: string): { address: string, family: AddressFamily, mapped?: true } | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  const unzoned = bare.replace(/%.*$/, '')
  const version = isIP(unzoned)
  if (version === 0) return undefined
  const mapped = version === 6 ? unmapIpv4(unzoned) : undefined
  if (mapped !== undefined) return { address: mapped, family: 'ipv4', mapped: true }
  return { address: unzoned, family: version === 4 ? 'ipv4' : 'ipv6' }
}

/**
 * True when a connection to `address` (an IP) must be refused under the allowlist. A mapped address reaches the
 * IPv4 host it names, so it is judged by that host's allowlisting alike in both forms; not allowlisted, it is
 * refused whatever it maps to.
 */
export function isRefusedAddress (address: string, allow?: BlockList): boolean {
  const literal = literalAddress(address)
  // Not an IP: nothing a socket could be connected to, so nothing to allow.
  if (literal === undefined) return true
  if (allow?.check(literal.address, literal.family) === true) return false
  return literal.mapped === true || refused.check(literal.address, literal.family)
}

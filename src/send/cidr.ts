/** CIDR networks as `net.BlockList`s: the SSRF guard's refused ranges and the operator's allowlist. */
import { BlockList, isIP } from 'node:net'

export type AddressFamily = 'ipv4' | 'ipv6'

/** One network, `address/prefix` (a bare address is a network of one). Throws a one-line message when malformed. */
export function parseCidr (text: string): { address: string, prefix: number, family: AddressFamily } {
  const trimmed = text.trim()
  const slash = trimmed.indexOf('/')
  const address = slash === -1 ? trimmed : trimmed.slice(0, slash)
  const version = isIP(address)
  if (version === 0) throw new TypeError(`"${trimmed}" is not an IPv4 or IPv6 network (a.b.c.d/n or x::/n)`)
  const max = version === 4 ? 32 : 128
  const prefixText = slash === -1 ? String(max) : trimmed.slice(slash + 1)
  const prefix = Number(prefixText)
  if (!/^\d{1,3}$/.test(prefixText) || prefix > max) {
    throw new TypeError(`"${trimmed}": the prefix length must be a whole number from 0 to ${max}`)
  }
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' }
}

/** A comma-separated list (as `ANVIL_OUTBOUND_ALLOW_NETS`) or an array of networks. */
export function splitNets (nets: string | readonly string[]): string[] {
  const list = typeof nets === 'string' ? nets.split(',') : [...nets]
  return list.map((one) => one.trim()).filter((one) => one !== '')
}

/** The networks as a BlockList; throws on the first malformed one. */
export function blockListOf (nets: readonly string[]): BlockList {
  const list = new BlockList()
  for (const net of nets) {
    const { address, prefix, family } = parseCidr(net)
    list.addSubnet(address, prefix, family)
  }
  return list
}

/** The first problem with a list of networks, as one line, or undefined. */
export function netsProblem (nets: string | readonly string[]): string | undefined {
  try {
    blockListOf(splitNets(nets))
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

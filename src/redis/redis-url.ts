/**
 * Redis URLs: `redis://` and `rediss://` for one server, `redis+cluster://` and `rediss+cluster://`
 * for a Redis Cluster, named by one or more seed nodes: `redis+cluster://user:pass@host:port,host:port`.
 */
import { redactUrl } from '../shared/redact-url.js'

export { redactUrl }

export interface RedisTarget {
  cluster: boolean
  tls: boolean
  nodes: Array<{ host: string, port: number }>
  username?: string
  password?: string
  /** The database number; one server only (a cluster has database 0 alone). */
  db?: number
}

const SCHEMES: Record<string, { cluster: boolean, tls: boolean }> = {
  'redis:': { cluster: false, tls: false },
  'rediss:': { cluster: false, tls: true },
  'redis+cluster:': { cluster: true, tls: false },
  'rediss+cluster:': { cluster: true, tls: true }
}
const DEFAULT_PORT = 6379

/** The target of a Redis URL, or the one-line problem with it. */
export function parseRedisTarget (url: string): RedisTarget | string {
  const scheme = /^([a-z+]+:)\/\//i.exec(url)?.[1]?.toLowerCase()
  const kind = scheme === undefined ? undefined : SCHEMES[scheme]
  if (scheme === undefined) return `is not a URL: ${redactUrl(url)}`
  if (kind === undefined) return `must start with redis://, rediss://, redis+cluster:// or rediss+cluster://, got ${scheme}//`
  if (!kind.cluster) {
    let parsed: URL
    try { parsed = new URL(url) } catch { return `is not a URL: ${redactUrl(url)}` }
    const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : undefined
    if (db !== undefined && !(Number.isInteger(db) && db >= 0)) return `has a database that is not a number: ${parsed.pathname}`
    if (parsed.hostname === '') return 'has no host'
    const auth = credentials(parsed.username, parsed.password)
    if (typeof auth === 'string') return auth
    return {
      ...kind,
      nodes: [{ host: parsed.hostname.replace(/^\[|\]$/g, ''), port: parsed.port === '' ? DEFAULT_PORT : Number(parsed.port) }],
      ...auth,
      ...(db === undefined ? {} : { db })
    }
  }
  // URL cannot hold several hosts, so the seed list is split by hand.
  const rest = url.slice(scheme.length + 2).replace(/[/?#].*$/, '')
  const at = rest.lastIndexOf('@')
  const [username, password] = at === -1 ? ['', ''] : splitCredentials(rest.slice(0, at))
  const nodes: RedisTarget['nodes'] = []
  for (const seed of (at === -1 ? rest : rest.slice(at + 1)).split(',')) {
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(seed)
    if (match === null) return `has a seed node that is not host:port: ${JSON.stringify(seed)}`
    const port = match[2] === undefined ? DEFAULT_PORT : Number(match[2])
    if (port < 1 || port > 65535) return `has a port out of range: ${match[2] ?? ''}`
    nodes.push({ host: (match[1] as string).replace(/^\[|\]$/g, ''), port })
  }
  const auth = credentials(username, password)
  return typeof auth === 'string' ? auth : { ...kind, nodes, ...auth }
}

function splitCredentials (text: string): [string, string] {
  const colon = text.indexOf(':')
  return colon === -1 ? [text, ''] : [text.slice(0, colon), text.slice(colon + 1)]
}

function credentials (username: string, password: string): Pick<RedisTarget, 'username' | 'password'> | string {
  try {
    return {
      ...(username === '' ? {} : { username: decodeURIComponent(username) }),
      ...(password === '' ? {} : { password: decodeURIComponent(password) })
    }
  } catch {
    return 'has credentials that are not valid percent-encoding'
  }
}

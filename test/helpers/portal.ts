/** What the portal's tests share: the admin API over HTTP with a given token, the docs' recipes, a catalog schema. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './root.js'

export interface AdminClient {
  get: <T>(path: string) => Promise<T>
  /** A call that must succeed (2xx): its JSON answer, or undefined for 204. */
  send: <T = unknown>(method: string, path: string, body?: object) => Promise<T>
}

export function portalAdmin (base: string, token: string): AdminClient {
  async function send<T> (method: string, path: string, body?: object): Promise<T> {
    const res = await fetch(`${base}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return (text === '' ? undefined : JSON.parse(text)) as T
  }
  return { get: async <T>(path: string) => await send<T>('GET', path), send }
}

const recipes = readFileSync(join(ROOT, 'docs/outgoing-webhooks.md'), 'utf8')
const portalDoc = readFileSync(join(ROOT, 'docs/portal.md'), 'utf8')

/** The code block of docs/portal.md whose first line is `firstLine`, as written. */
export function docsSnippet (firstLine: string): string {
  const found = [...portalDoc.matchAll(/```\w+\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((code) => code.split('\n')[0] === firstLine)
  if (found === undefined) throw new Error(`docs/portal.md has no block starting with ${firstLine}`)
  return found
}

/** The code block of docs/outgoing-webhooks.md whose first line ends with `firstLine`, as written. */
export function docsBlock (firstLine: string): string {
  const found = [...recipes.matchAll(/```\w+\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((code) => code.split('\n')[0]?.endsWith(firstLine))
  if (found === undefined) throw new Error(`docs/outgoing-webhooks.md has no block starting with ${firstLine}`)
  return found
}

/** A catalog type with the keywords the portal's sample must satisfy: bounds, an enum, a format, nested arrays. */
export const INVOICE_PAID = {
  type: 'object',
  properties: {
    invoiceId: { type: 'string', minLength: 8 },
    amount: { type: 'integer', minimum: 1 },
    currency: { type: 'string', enum: ['eur', 'usd'] },
    paidAt: { type: 'string', format: 'date-time' },
    customer: { type: 'object', properties: { id: { type: 'string' }, email: { type: 'string', format: 'email' } }, required: ['id'] },
    lines: {
      type: 'array', minItems: 1,
      items: { type: 'object', properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } }, required: ['sku', 'quantity'] }
    },
    paid: { type: 'boolean' },
    note: { anyOf: [{ type: 'null' }, { type: 'string', maxLength: 3 }] }
  },
  required: ['invoiceId', 'amount', 'currency', 'paidAt', 'lines'],
  additionalProperties: false
}

import Fastify from 'fastify'
import { request } from 'node:http'
import anvilAdmin from './dist/plugins/admin/admin.js'
import anvilOutbound from './dist/plugins/outbound.js'
import anvilHealth from './dist/plugins/health.js'
const app = Fastify()
await app.register(anvilOutbound, { database: 'postgres://postgres@127.0.0.1:5432/qdebug1', redis: 'redis://127.0.0.1:16399' })
await app.register(anvilAdmin, { token: 'admin-token-0123456789' })
await app.register(anvilHealth, { redis: 'redis://127.0.0.1:16399' })
await app.listen({ host: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${app.server.address().port}`
function send (method, path, payload) {
  let sent
  const written = new Promise((resolve) => { sent = resolve })
  const answer = new Promise((resolve, reject) => {
    const body = payload === undefined ? undefined : JSON.stringify(payload)
    const req = request(`${base}${path}`, { method, agent: false, headers: { authorization: 'Bearer admin-token-0123456789', ...(body === undefined ? {} : { 'content-type': 'application/json' }) } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { text += c })
      res.on('end', () => resolve({ status: res.statusCode, text }))
    })
    req.on('error', reject)
    req.on('finish', () => { console.log('finish', path); sent() })
    req.end(body)
  })
  return { sent: written, answer }
}
console.log(await send('GET', '/health/live').answer)
console.log(await send('PUT', '/admin/event-types/p', { schema: { type: 'string' } }).answer)
await app.close()

// The ceiling: a bare Fastify route that answers 202 and does no work.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
app.post('/webhooks', async (_request, reply) => reply.code(202).send({ jobId: 'none', replayed: false }))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.send?.('ready')

// The receiver of the outbound benches, in its own process: reads each body and answers 204; a path under
// /hang is never answered, and one under /trickle answers 200 then writes its body a byte a second, never
// ending (the hostile endpoints). PORT from the environment.
import { createServer } from 'node:http'

const server = createServer((req, res) => {
  if (req.url?.startsWith('/hang')) return
  req.resume()
  req.on('end', () => {
    if (!req.url?.startsWith('/trickle')) { res.statusCode = 204; res.end(); return }
    res.writeHead(200)
    res.write('.')
    const drip = setInterval(() => res.write('.'), 1000)
    res.on('close', () => clearInterval(drip))
  })
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)) })

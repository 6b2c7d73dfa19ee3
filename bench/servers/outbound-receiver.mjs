// The receiver of the outbound bench, in its own process: reads each body and answers 204; a path under /hang
// is never answered (the hanging endpoint of the isolation case). PORT from the environment.
import { createServer } from 'node:http'

const server = createServer((req, res) => {
  if (req.url?.startsWith('/hang')) return
  req.resume()
  req.on('end', () => { res.statusCode = 204; res.end() })
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)) })

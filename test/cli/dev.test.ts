/**
 * `anvil dev`: a private redis-server when none answers, printed curls that work, SIGINT/SIGTERM; `--handler
 * ./handler.ts` runs with the tsx of the user's project (and `anvil worker` through the same loader), and without it
 * is one line that says how (Node 20 strips no types). Helpers: test/helpers/cli.ts.
 */
import t, { type Test } from 'tap'
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { ensureDevRedis, findExecutable, probeRedis, redisPid, startPrivateRedis } from '../../cli/dev-redis.js'
import { ROOT, curlResponse, HAS_CURL, inspect, isRunning, parseJson, runCli, sendPrinted, shell, startCli, tempDir } from '../helpers/cli.js'
import { freePort, TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

t.test('dev starts a private redis-server when none answers, prints working curls, logs events, stops Redis on exit', async (t) => {
  const cwd = tempDir(t)
  const probePort = await freePort()
  const cli = startCli(t, ['dev'], {
    cwd, env: { ANVIL_DEV_REDIS_PROBE_URL: `redis://127.0.0.1:${probePort}`, PORT: '0', ANVIL_QUEUE: 'cli-dev' }
  })
  const started = await cli.log('anvil dev: started redis-server')
  const redisPid = started.redisPid as number
  t.teardown(() => { if (isRunning(redisPid)) process.kill(redisPid, 'SIGKILL') })
  t.equal(started.url, `redis://127.0.0.1:${probePort}`, 'on the probed port, where nothing listened')
  t.ok(isRunning(redisPid), 'redis-server runs')
  const port = Number((await cli.log('anvil dev: listening', { host: '127.0.0.1' })).port)

  // The pasteable curl, exactly as printed.
  const signedCurl = (await cli.line((line) => line.startsWith('  curl '))).trim()
  t.match(signedCurl, `http://127.0.0.1:${port}/webhooks`)
  const first = await sendPrinted(signedCurl)
  t.equal(first.status, 202)
  t.match(first.body, { jobId: /^e_/, replayed: false })
  const body = /--data '([^']*)'/.exec(signedCurl)?.[1] as string
  const eventId = (JSON.parse(body) as { id: string }).id
  t.match(eventId, /^evt_[0-9a-f]{12}$/, 'a fresh event id')
  await cli.log('anvil dev: event', { eventId, eventType: 'test.ping', bytes: Buffer.byteLength(body) })

  // The openssl variant, with the export line printed for the dev secret: same bytes, same signature.
  const exportLine = (await cli.line((line) => line.startsWith('  export WEBHOOK_SECRET='))).trim()
  t.equal(exportLine, 'export WEBHOOK_SECRET=whsec_dev')
  const opensslCurl = (await cli.line((line) => line.startsWith('  body='))).trim()
  if (HAS_CURL) {
    const again = curlResponse(await shell(`${exportLine}; ${opensslCurl}`))
    t.same(again, { status: 202, body: { jobId: (first.body as { jobId: string }).jobId, replayed: true } })
  } else {
    t.comment('curl is not on PATH: the openssl variant was not run')
  }

  // The `anvil send` line, as printed (the dev secret set on it): a fresh sample event, accepted.
  const sendLine = (await cli.line((line) => line.startsWith('  ANVIL_SEND_SECRET='))).trim()
  t.equal(sendLine, `ANVIL_SEND_SECRET=whsec_dev npx anvil send http://127.0.0.1:${port}/webhooks --provider anvil --event 'test.ping'`)
  // Verbatim, in a clone (npx finds the package's own bin; offline, so it never asks the registry).
  t.match(parseJson(await shell(`cd ${ROOT} && ${sendLine}`, { npm_config_offline: 'true' })), { status: 202, answer: { replayed: false } })

  t.equal(await cli.stop('SIGTERM'), 0)
  t.notOk(isRunning(redisPid), 'redis-server is gone')
  t.ok(existsSync(join(cwd, '.anvil', 'appendonlydir')), 'its data is under ./.anvil with an append-only file')
})

t.test('dev uses a Redis that answers the probe, never shows a secret it was given, and exits 0 on SIGINT', async (t) => {
  const secret = 'whsec_user_given_secret'
  const cli = startCli(t, ['dev', '--port', '0'], {
    cwd: tempDir(t), env: { ANVIL_DEV_REDIS_PROBE_URL: redis.url, WEBHOOK_SECRET: secret, ANVIL_QUEUE: 'cli-dev-existing' }
  })
  t.equal((await cli.log('anvil dev: using the Redis that is running')).url, redis.url)
  const port = await cli.listeningPort('anvil dev: listening')
  const signedCurl = (await cli.line((line) => line.startsWith('  curl '))).trim()
  t.equal((await sendPrinted(signedCurl)).status, 202, 'the printed curl is signed with the given secret')
  t.equal(await cli.stop('SIGINT'), 0)
  t.notOk(cli.lines.some((line) => parseJson(line)?.msg === 'anvil dev: started redis-server'))
  t.notMatch(cli.output, secret)
  t.notMatch(cli.output, 'export WEBHOOK_SECRET')
})

t.test('dev without redis-server on PATH: exit 1 and one line on how to get Redis', async (t) => {
  // node's own directory may hold redis-server too (/usr/bin), so PATH is a directory with only node in it.
  const bin = tempDir(t)
  symlinkSync(process.execPath, join(bin, 'node'))
  const probePort = await freePort()
  const result = await runCli(['dev'], {
    node: join(bin, 'node'), cwd: tempDir(t), env: { PATH: bin, ANVIL_DEV_REDIS_PROBE_URL: `redis://127.0.0.1:${probePort}` }
  })
  t.equal(result.code, 1)
  t.equal(result.stderr, `anvil: no Redis: nothing answers at redis://127.0.0.1:${probePort} and redis-server is not on PATH; ` +
    'install Redis (apt-get install redis-server, or brew install redis) or set REDIS_URL\n')
})

t.test('dev Redis launcher: a non-Redis server on the probed port means a free port; stop() ends redis-server', async (t) => {
  const impostor = createServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'))
  await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve))
  t.teardown(() => impostor.close())
  const port = (impostor.address() as AddressInfo).port
  const probeUrl = `redis://127.0.0.1:${port}`
  t.equal(await probeRedis(probeUrl), 'other')
  const found = await ensureDevRedis({ probeUrl, dir: join(tempDir(t), '.anvil') })
  const started = found.started
  if (started === undefined) throw new Error('expected a private redis-server')
  t.teardown(() => started.stop())
  t.not(started.port, port, 'another port')
  t.equal(found.url, started.url)
  t.equal(await probeRedis(started.url), 'redis')
  await started.stop()
  t.notOk(isRunning(started.pid))
  t.equal(await probeRedis(started.url), 'refused')
})

t.test('dev Redis launcher: on a port another Redis holds, it starts on another port, and the server there is its own', async (t) => {
  // What a port taken between its pick and redis-server's start looks like: a Redis answers there, not ours.
  const started = await startPrivateRedis({ executable: findExecutable('redis-server') as string, port: redis.port, dir: join(tempDir(t), '.anvil') })
  t.teardown(() => started.stop())
  t.not(started.port, redis.port, 'another port')
  t.equal(await redisPid(started.url), started.pid, 'the server on it is the one started')
  t.not(await redisPid(redis.url), started.pid, 'the other Redis still answers on its port')
  t.equal(await probeRedis(redis.url), 'redis')
})

/** A project with a TypeScript handler, and tsx in its node_modules or not. */
function project (t: Test, withTsx: boolean): string {
  const cwd = tempDir(t)
  writeFileSync(join(cwd, 'package.json'), '{ "type": "module" }\n')
  writeFileSync(join(cwd, 'handler.ts'), 'export default async function handler (event: { id: string }): Promise<void> {\n  const id: string = event.id\n  console.log(`typed ${id}`)\n}\n')
  if (withTsx) {
    mkdirSync(join(cwd, 'node_modules'))
    symlinkSync(join(ROOT, 'node_modules', 'tsx'), join(cwd, 'node_modules', 'tsx'))
  }
  return cwd
}

t.test('dev --handler ./handler.ts without tsx in the project: one line on how', async (t) => {
  const result = await runCli(['dev', '--handler', './handler.ts'], { cwd: project(t, false), env: { REDIS_URL: 'redis://127.0.0.1:1' } })
  t.equal(result.code, 1)
  t.equal(result.stderr, `anvil: invalid configuration: --handler ./handler.ts is TypeScript, which Node ${process.version} cannot load alone: ` +
    'install tsx (npm install --save-dev tsx) and run again, or give the compiled .js\n')
})

// One process for two contracts of a dev run with REDIS_URL set: the handler given, and the Redis used.
t.test('dev --handler ./handler.ts with tsx installed in the project: the handler runs; with REDIS_URL set dev uses it and neither probes nor starts a redis-server', async (t) => {
  const cli = startCli(t, ['dev', '--handler', './handler.ts', '--port', '0'], {
    cwd: project(t, true),
    // Were the probe consulted, it would find nothing here and start a redis-server.
    env: { REDIS_URL: redis.url, ANVIL_DEV_REDIS_PROBE_URL: `redis://127.0.0.1:${await freePort()}`, ANVIL_QUEUE: 'cli-dev-url' }
  })
  await cli.log('anvil dev: listening', { handler: './handler.ts' })
  t.equal((await sendPrinted((await cli.line((line) => line.startsWith('  curl '))).trim())).status, 202)
  await cli.line((line) => line.startsWith('typed e_'))
  t.equal(await cli.stop('SIGTERM'), 0)
  t.notOk(cli.lines.some((line) => /redis-server|Redis that is running/.test(String(parseJson(line)?.msg))))
  const queue = inspect(t, redis.url, 'cli-dev-url')
  t.equal(await queue.getJobCountByTypes('wait', 'active', 'completed'), 1, 'the event went to REDIS_URL')
})

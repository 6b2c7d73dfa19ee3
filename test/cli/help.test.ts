/** `anvil --help` and configuration errors worded for the user, through the CLI as users run it. Helpers: test/helpers/cli.ts. */
import t from 'tap'
import { NEVER_PRINTED, runCli } from '../helpers/cli.js'

t.test('--help shows each flag with its default and its variable, from the one settings table', async (t) => {
  const { SETTINGS } = await import('../../cli/config/settings.js')
  /** One line per option: wrapped descriptions joined, the column padding collapsed. */
  const flat = (help: string): string => help.replace(/\n\s+(?=[^\s-])/g, ' ').replace(/ {2,}/g, ' ')
  const serve = await runCli(['serve', '--help'])
  t.equal(serve.code, 0)
  const lines = flat(serve.stdout)
  for (const setting of Object.values(SETTINGS)) {
    if (!lines.includes(setting.flag + ' ')) continue
    const line = lines.split('\n').find((l) => l.trimStart().startsWith(setting.flag + ' ')) ?? ''
    if (setting.env !== undefined) t.match(line, `env: ${setting.env})`, `${setting.flag} names ${setting.env}`)
    if (setting.default !== undefined) t.match(line, `(default: ${setting.defaultShown ?? setting.default}`, `${setting.flag} shows its default`)
  }
  t.match(lines, '--port <port> port to listen on (default: 3000, env: PORT)')
  t.match(lines, '--body-limit <bytes> largest accepted body (default: 1048576 (1 MiB), env: ANVIL_BODY_LIMIT)')
  const dev = await runCli(['dev', '--help'])
  t.match(flat(dev.stdout), '(default: 127.0.0.1, env: HOST)', 'dev listens on loopback by default')
  const worker = await runCli(['worker', '--help'])
  t.match(flat(worker.stdout), '--log-payloads <bool>', 'the worker logs payloads on request too')
})

t.test('through the CLI: a weak secret and a password in a mistyped REDIS_URL, one line each, nothing secret printed', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ WEBHOOK_SECRET: 'hunter2' },
      'anvil: invalid configuration: WEBHOOK_SECRET is shorter than 16 bytes: use a random one (e.g. `openssl rand -hex 32`), or ANVIL_ALLOW_SHORT_SECRETS=true for development'],
    [{ WEBHOOK_SECRET: NEVER_PRINTED, REDIS_URL: 'redis:/:hunter2@127.0.0.1:6379' },
      'anvil: invalid configuration: REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "redis:/***@127.0.0.1:6379")'],
    [{ WEBHOOK_SECRET: NEVER_PRINTED, REDIS_URL: 'redis://hunter2@127.0.0.1:6379/abc' },
      'anvil: invalid configuration: REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "redis://***@127.0.0.1:6379/abc")']
  ]
  await Promise.all(cases.map(async ([env, expected]) => {
    const result = await runCli(['serve'], { env })
    t.equal(result.code, 1)
    t.equal(result.stderr, expected + '\n')
    t.notMatch(result.stderr + result.stdout, /hunter2|whsec_never_print_me/)
  }))
})

/**
 * Configuration a user gets wrong, refused with one line that says what is wrong and never quotes a secret:
 * the sources file (unknown provider, `secret:` for `secrets:`, bad YAML), weak secrets, credentials in a
 * Redis URL, an unbalanced hash tag, absurd numbers, a source name that is not one line. The same rules
 * hold for the plugin's options (ANVIL_ERR_INVALID_OPTIONS) and the CLI's (ANVIL_ERR_INVALID_CONFIG).
 */
import t, { type Test } from 'tap'
import { resolveIngressOptions, type IngressOptions } from '../src/inbound/ingress-options.js'
import { loadDevConfig, loadServeConfig, type Env } from '../cli/config/load-config.js'
import { parseSourcesFile } from '../cli/config/sources-file.js'
import { PROVIDER_NAMES } from '../src/providers/presets.js'
import { isAnvilError } from '../src/shared/errors.js'

const SECRET = 'whsec_config_errors_0123'
const PASSWORD = 'SuperSecretPW'

/** The message of the error `run` throws, checked to be the Anvil error with `code` and one line. */
function refusal (t: Test, run: () => unknown, code: string): string {
  try {
    run()
  } catch (err) {
    if (!isAnvilError(err) || err.code !== code) throw err
    t.notMatch(err.message, '\n', 'one line')
    return err.message
  }
  throw new Error(`expected ${code}`)
}
const config = (t: Test, run: () => unknown): string => refusal(t, run, 'ANVIL_ERR_INVALID_CONFIG')
const options = (t: Test, opts: IngressOptions): string => refusal(t, () => resolveIngressOptions(opts), 'ANVIL_ERR_INVALID_OPTIONS')
const serve = (t: Test, env: Env): string => config(t, () => loadServeConfig({ WEBHOOK_SECRET: SECRET, ...env }))

t.test('sources file: an unknown provider lists the valid ones', async (t) => {
  const message = config(t, () => parseSourcesFile('sources:\n  - { path: /mail, provider: mailchimp, secrets: ["${S}"] }\n', 'hooks.yaml', { S: SECRET }))
  t.equal(message, `Invalid configuration: hooks.yaml: sources.0.provider must be one of ${PROVIDER_NAMES.join(', ')}`)
  t.match(options(t, { sources: [{ path: '/m', provider: 'mailchimp' as never, secrets: [SECRET] }] }), `sources.0.provider must be one of ${PROVIDER_NAMES.join(', ')}`)
})

t.test('sources file: a singular `secret:` asks whether `secrets` was meant', async (t) => {
  const message = config(t, () => parseSourcesFile('sources:\n  - path: /stripe\n    provider: stripe\n    secret: whsec_abcdefghijklmnop\n', 'hooks.yaml'))
  t.equal(message, 'Invalid configuration: hooks.yaml: sources.0.secret: Unexpected property; did you mean secrets?')
  t.notMatch(message, 'whsec_abcdefghijklmnop')
  t.match(options(t, { sources: [{ path: '/s', provider: 'stripe', secret: SECRET } as never] }), 'sources.0.secret: Unexpected property; did you mean secrets?')
})

t.test('sources file: bad YAML quotes the line it stopped at, never a secret on it', async (t) => {
  const text = 'sources:\n  - path: /a\n   provider: stripe\n'
  t.equal(config(t, () => parseSourcesFile(text, 'bad.yaml')),
    'Invalid configuration: bad.yaml is neither JSON nor YAML: Sequence item without - indicator at line 3, column 1: "   provider: stripe"')
  const inline = 'sources:\n  - { path: /a, provider: stripe, secrets: [whsec_inline_secret_value }\n'
  const message = config(t, () => parseSourcesFile(inline, 'inline.yaml'))
  t.match(message, /inline\.yaml is neither JSON nor YAML: .* at line 2, column \d+: "  - \{ path: \/a, provider: stripe, secrets: …"$/)
  t.notMatch(message, 'whsec_inline_secret_value')
  const listed = 'sources:\n  - path: /a\n    secrets:\n      - whsec_listed_secret_value: [\n'
  const other = config(t, () => parseSourcesFile(listed, 'listed.yaml'))
  t.notMatch(other, 'whsec_listed_secret_value', 'an item listed under secrets: is not quoted either')
})

t.test('a secret shorter than 16 bytes is refused, unless allowed for development; whitespace alone never passes', async (t) => {
  t.equal(config(t, () => loadServeConfig({ WEBHOOK_SECRET: 'too-short' })),
    'Invalid configuration: WEBHOOK_SECRET is shorter than 16 bytes: use a random one (e.g. `openssl rand -hex 32`), or ANVIL_ALLOW_SHORT_SECRETS=true for development')
  t.equal(loadServeConfig({ WEBHOOK_SECRET: 'too-short', ANVIL_ALLOW_SHORT_SECRETS: 'true' }).secret, 'too-short')
  t.equal(loadServeConfig({ WEBHOOK_SECRET: 'too-short' }, { allowShortSecrets: 'true' }).allowShortSecrets, true, 'the flag too')
  t.equal(loadServeConfig({ WEBHOOK_SECRET: 'exactly-16-bytes' }).secret, 'exactly-16-bytes', '16 bytes is enough')
  t.match(loadDevConfig({}), { secret: 'whsec_dev', devSecret: true }, "anvil dev's own secret still works")
  t.match(loadDevConfig({ WEBHOOK_SECRET: 'short' }), { secret: 'short' }, 'anvil dev accepts short ones')
  t.equal(config(t, () => loadServeConfig({ WEBHOOK_SECRET: '   ', ANVIL_ALLOW_SHORT_SECRETS: 'true' })), 'Invalid configuration: WEBHOOK_SECRET is only whitespace')
  t.equal(config(t, () => loadDevConfig({ WEBHOOK_SECRET: ' \t ' })), 'Invalid configuration: WEBHOOK_SECRET is only whitespace')

  const file = 'sources:\n  - { path: /gh, provider: github, secrets: ["${GH}", tiny] }\n'
  t.equal(config(t, () => parseSourcesFile(file, 'hooks.yaml', { GH: 'gh-short' })),
    'Invalid configuration: hooks.yaml: sources.0.secrets.0 (${GH}) is shorter than 16 bytes: use a random one (e.g. `openssl rand -hex 32`), or ANVIL_ALLOW_SHORT_SECRETS=true for development')
  t.equal(config(t, () => parseSourcesFile(file, 'hooks.yaml', { GH: SECRET })),
    'Invalid configuration: hooks.yaml: sources.0.secrets.1 is shorter than 16 bytes: use a random one (e.g. `openssl rand -hex 32`), or ANVIL_ALLOW_SHORT_SECRETS=true for development')
  t.equal(parseSourcesFile(file, 'hooks.yaml', { GH: 'gh-short' }, true).length, 1, 'allowed for development')
  t.equal(config(t, () => parseSourcesFile('sources: [{ path: /a, secrets: ["  "] }]', 'ws.yaml', {}, true)),
    'Invalid configuration: ws.yaml: sources.0.secrets.0 is only whitespace')

  t.equal(options(t, { secret: 'too-short' }),
    'Invalid Anvil options: secret is shorter than 16 bytes: use a random one (e.g. `openssl rand -hex 32`), or allowShortSecrets: true for development')
  t.match(options(t, { secrets: [SECRET, 'short'] }), /^Invalid Anvil options: secrets\.1 is shorter than 16 bytes/)
  t.match(options(t, { sources: [{ path: '/s', provider: 'stripe', secrets: ['short'] }] }), /^Invalid Anvil options: sources\.0\.secrets\.0 is shorter than 16 bytes/)
  t.equal(options(t, { secret: ' \n ', allowShortSecrets: true }), 'Invalid Anvil options: secret is only whitespace')
  t.doesNotThrow(() => resolveIngressOptions({ secret: 'short', allowShortSecrets: true }))
})

t.test('a password in a Redis URL is never echoed, parsed or not', async (t) => {
  for (const url of [`redis:/:${PASSWORD}@127.0.0.1:6379`, `redis://${PASSWORD}@127.0.0.1:6379/abc`, `redis+cluster://u:${PASSWORD}@h1:1,h2:x`, `redis//:${PASSWORD}@h`]) {
    const message = serve(t, { REDIS_URL: url })
    t.notMatch(message, PASSWORD, `config: ${url}`)
    t.match(message, /^Invalid configuration: REDIS_URL must be a redis:\/\/, rediss:\/\/, redis\+cluster:\/\/ or rediss\+cluster:\/\/ URL \(got ".*\*\*\*@/)
    t.notMatch(options(t, { secret: SECRET, redis: url }), PASSWORD, `plugin: ${url}`)
  }
  t.equal(serve(t, { REDIS_URL: `redis:/:${PASSWORD}@127.0.0.1:6379` }),
    'Invalid configuration: REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "redis:/***@127.0.0.1:6379")')
  t.equal(serve(t, { REDIS_URL: `redis://${PASSWORD}@127.0.0.1:6379/abc` }),
    'Invalid configuration: REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "redis://***@127.0.0.1:6379/abc")')
  t.equal(options(t, { secret: SECRET, redis: `redis:/:${PASSWORD}@127.0.0.1:6379` }), 'Invalid Anvil options: redis is not a URL: redis:/***@127.0.0.1:6379')
})

t.test('values that parse but make no sense are refused, one line each', async (t) => {
  t.equal(serve(t, { ANVIL_PREFIX: '{x' }),
    'Invalid configuration: ANVIL_PREFIX must be a key prefix whose braces pair up around a name, as in {anvil} (a Redis Cluster hash tag) (got "{x")')
  for (const prefix of ['x}', '{}', '{a}{b', '{{a}}']) t.match(serve(t, { ANVIL_PREFIX: prefix }), 'ANVIL_PREFIX must be a key prefix whose braces pair up', prefix)
  for (const prefix of ['anvil', '{anvil}', 'app:{orders}', '{a}:{b}']) t.equal(loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_PREFIX: prefix }).prefix, prefix)
  t.equal(options(t, { secret: SECRET, prefix: '{x' }),
    'Invalid Anvil options: prefix must be a non-empty key prefix whose braces pair up around a name, as in {anvil} (a Redis Cluster hash tag)')

  t.equal(serve(t, { ANVIL_BODY_LIMIT: '99999999999999999999' }),
    'Invalid configuration: ANVIL_BODY_LIMIT must be at most 1073741824 bytes (1 GiB) (got "99999999999999999999")')
  t.equal(serve(t, { ANVIL_BODY_LIMIT: '2000000000' }),
    'Invalid configuration: ANVIL_BODY_LIMIT must be at most 1073741824 bytes (1 GiB) (got "2000000000")')
  t.match(options(t, { secret: SECRET, bodyLimit: 1e20 }), 'bodyLimit: Expected integer to be less or equal to 1073741824')
  t.equal(serve(t, { ANVIL_DEDUPE_WINDOW_MS: '99999999999999999999' }),
    'Invalid configuration: ANVIL_DEDUPE_WINDOW_MS must be a whole number of milliseconds, at least 1 (got "99999999999999999999")', 'past the safe integers')

  t.equal(config(t, () => parseSourcesFile('sources: [{ path: /s, provider: stripe, secrets: ["${S}"], tolerance: 1e300 }]', 'hooks.yaml', { S: SECRET })),
    'Invalid configuration: hooks.yaml: sources.0.tolerance: Expected integer to be less or equal to 86400')
  t.match(options(t, { sources: [{ path: '/s', provider: 'stripe', secrets: [SECRET], tolerance: 1e300 }] }), 'sources.0.tolerance: Expected integer to be less or equal to 86400')

  for (const name of ['a\nb', 'a\u0000b', '']) {
    t.equal(config(t, () => parseSourcesFile(JSON.stringify({ sources: [{ path: '/s', provider: 'stripe', secrets: [SECRET], name }] }), 'hooks.json')),
      'Invalid configuration: hooks.json: sources.0.name must be 1 to 200 characters, none of them a control character (a newline, NUL)', JSON.stringify(name))
    t.equal(options(t, { sources: [{ path: '/s', provider: 'stripe', secrets: [SECRET], name }] }),
      'Invalid Anvil options: sources.0.name must be 1 to 200 characters, none of them a control character (a newline, NUL)')
  }
  t.equal(options(t, { secret: SECRET, source: 'two\nlines' }),
    'Invalid Anvil options: source must be 1 to 200 characters, none of them a control character (a newline, NUL)')
})

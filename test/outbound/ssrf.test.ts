import t from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { lookup as dnsLookup } from 'node:dns'
import { request } from 'undici'
import { createGuardedDispatcher } from '../../src/send/guarded-dispatcher.js'
import { isRefusedAddress, unmapIpv4 } from '../../src/send/address-policy.js'
import { blockListOf, netsProblem, parseCidr } from '../../src/send/cidr.js'
import { endpointUrlProblem } from '../../src/endpoints/endpoint-url.js'

async function listen (): Promise<{ server: Server, port: number, hits: () => number }> {
  let hits = 0
  const server = createServer((_req, res) => { hits++; res.end('ok') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port, hits: () => hits }
}

/** A resolver that answers every name with one address, as a DNS record pointing at it would. */
const pointAt = (address: string, family: 4 | 6 = 4) => ((_name: string, _options: unknown, callback: (err: null, list: Array<{ address: string, family: number }>) => void) => {
  callback(null, [{ address, family }])
}) as unknown as typeof dnsLookup

t.test('refused ranges, IPv4-mapped IPv6 included, and the allowlist', async (t) => {
  for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
    '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fc00::1', 'fe80::1', 'fe80::1%eth0', '[::1]', '::ffff:127.0.0.1',
    '::ffff:7f00:1', '0:0:0:0:0:ffff:a9fe:a9fe', '::ffff:10.0.0.1', '224.0.0.1', 'not-an-ip',
    '::7f00:1', '::127.0.0.1', '::a9fe:a9fe', '::808:808', '::ffff:8.8.8.8', '::ffff:808:808']) {
    t.ok(isRefusedAddress(address), `${address} refused`)
  }
  for (const address of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111']) {
    t.notOk(isRefusedAddress(address), `${address} allowed`)
  }
  t.equal(unmapIpv4('::ffff:7f00:1'), '127.0.0.1')
  t.equal(unmapIpv4('1::ffff:7f00:1'), undefined)
  const allow = blockListOf(['127.0.0.0/8', '::1'])
  t.notOk(isRefusedAddress('127.0.0.2', allow))
  t.notOk(isRefusedAddress('::ffff:127.0.0.1', allow), 'a mapped address is allowed by its IPv4 network')
  t.notOk(isRefusedAddress('::ffff:7f00:2', allow), 'in either notation')
  t.notOk(isRefusedAddress('::1', allow))
  t.ok(isRefusedAddress('10.0.0.1', allow), 'only the allowlisted networks')
  t.ok(isRefusedAddress('::ffff:10.0.0.1', allow), 'nor through the mapped form of another network')
  t.ok(isRefusedAddress('::7f00:1', allow), 'an IPv4-compatible address is an IPv6 address: the IPv4 allowlist does not cover it')
  const cluster = blockListOf(['10.96.0.0/12'])
  for (const address of ['10.96.0.1', '::ffff:10.96.0.1', '::ffff:a60:1']) t.notOk(isRefusedAddress(address, cluster), `${address} allowed with 10.96.0.0/12`)
  for (const address of ['10.95.0.1', '::ffff:10.95.0.1', '::a60:1', '::ffff:127.0.0.1', '::ffff:8.8.8.8']) t.ok(isRefusedAddress(address, cluster), `${address} refused with 10.96.0.0/12`)
})

t.test('the CIDR parser names what is wrong', async (t) => {
  t.same(parseCidr(' 10.0.0.0/8 '), { address: '10.0.0.0', prefix: 8, family: 'ipv4' })
  t.same(parseCidr('::1'), { address: '::1', prefix: 128, family: 'ipv6' })
  t.equal(netsProblem('127.0.0.0/8, ::1/128'), undefined)
  t.match(netsProblem('127.0.0.0/33'), /prefix length must be a whole number from 0 to 32/)
  t.match(netsProblem(['10.0.0.0/x']), /prefix length/)
  t.match(netsProblem('localhost/8'), /not an IPv4 or IPv6 network/)
  t.match(netsProblem('10.0.0.0/-1'), /prefix length/)
})

t.test('endpoint URLs: http(s), no credentials, at most 2 KiB, https only on request', async (t) => {
  t.equal(endpointUrlProblem('https://example.com/hook'), undefined)
  t.equal(endpointUrlProblem('http://example.com/hook'), undefined)
  t.equal(endpointUrlProblem('http://example.com/hook', { httpsOnly: true }), 'must be https')
  t.equal(endpointUrlProblem('ftp://example.com/'), 'must be http or https')
  t.equal(endpointUrlProblem('file:///etc/passwd'), 'must be http or https')
  t.equal(endpointUrlProblem('https://user:pw@example.com/'), 'must not carry credentials (user:password@)')
  t.equal(endpointUrlProblem('https://user@example.com/'), 'must not carry credentials (user:password@)')
  t.equal(endpointUrlProblem('https://example.com/' + 'a'.repeat(2048)), 'must be at most 2048 characters')
  t.equal(endpointUrlProblem('/relative'), 'must be an absolute http(s) URL')
  t.equal(endpointUrlProblem(42), 'must be a URL')
})

t.test('the guard refuses at connection time, after DNS, unless allowlisted', async (t) => {
  const target = await listen()
  t.teardown(() => target.server.close())
  const post = async (dispatcher: ReturnType<typeof createGuardedDispatcher>, host: string): Promise<number> => {
    const response = await request(`http://${host}:${target.port}/`, { method: 'POST', body: '{}', dispatcher })
    await response.body.dump()
    return response.statusCode
  }

  // A public-looking name whose DNS answer is loopback: the rebinding case.
  const guarded = createGuardedDispatcher({ lookup: pointAt('127.0.0.1') })
  t.teardown(() => guarded.close())
  await t.rejects(post(guarded, 'hooks.example.com'), { code: 'ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED' })
  await t.rejects(post(guarded, '127.0.0.1'), { code: 'ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED' }, 'an IP literal')
  await t.rejects(post(guarded, '[::ffff:127.0.0.1]'), { code: 'ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED' }, 'a mapped literal')
  const real = createGuardedDispatcher()
  t.teardown(() => real.close())
  await t.rejects(post(real, 'localhost'), { code: 'ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED' }, 'the real resolver, localhost')
  t.equal(target.hits(), 0, 'nothing reached the receiver')

  const allowed = createGuardedDispatcher({ allowNets: '127.0.0.0/8', lookup: pointAt('127.0.0.1') })
  t.teardown(() => allowed.close())
  t.equal(await post(allowed, 'hooks.example.com'), 200)
  t.equal(await post(allowed, '127.0.0.1'), 200)
  t.equal(target.hits(), 2)

  // After DNS: an AAAA answer in the mapped or compatible form is refused unless its IPv4 network is allowlisted.
  for (const address of ['::ffff:127.0.0.1', '::7f00:1', '::ffff:8.8.8.8', '::8.8.8.8']) {
    const sixes = createGuardedDispatcher({ lookup: pointAt(address, 6) })
    t.teardown(() => sixes.close())
    await t.rejects(post(sixes, 'hooks.example.com'), { code: 'ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED' }, `a name resolving to ${address}`)
  }
  const compatible = createGuardedDispatcher({ allowNets: '127.0.0.0/8', lookup: pointAt('::7f00:1', 6) })
  t.teardown(() => compatible.close())
  await t.rejects(post(compatible, 'hooks.example.com'), { code: 'ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED' }, 'compatible: not the allowlisted IPv4 host')
  const mapped = createGuardedDispatcher({ allowNets: '127.0.0.0/8', lookup: pointAt('::ffff:127.0.0.1', 6) })
  t.teardown(() => mapped.close())
  t.equal(await post(mapped, 'hooks.example.com'), 200, 'mapped: the allowlisted IPv4 host, reached')
  t.equal(await post(mapped, '[::ffff:127.0.0.1]'), 200, 'its literal too')
  t.equal(target.hits(), 4)

  const otherNet = createGuardedDispatcher({ allowNets: ['10.0.0.0/8'], lookup: pointAt('127.0.0.1') })
  t.teardown(() => otherNet.close())
  await t.rejects(post(otherNet, 'hooks.example.com'), { code: 'ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED' })
  t.throws(() => createGuardedDispatcher({ allowNets: '10.0.0.0/40' }), /prefix length/)
})

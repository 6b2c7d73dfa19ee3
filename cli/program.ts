/**
 * The `anvil` program: its commands, their flags (from the settings table) and their actions. Each command
 * loads its configuration first (so a bad value fails fast, before Fastify or BullMQ are even imported),
 * then imports its module.
 */
import { Command } from 'commander'
import { loadDevConfig, loadMigrateConfig, loadReplayConfig, loadServeConfig, loadWorkerConfig } from './config/load-config.js'
import {
  DEV_DEFAULTS, addDeadLetterRetentionOptions, addForwardOptions, addOutgoingOptions, addIngressOptions, addObservabilityOptions, addRetentionOptions,
  SETTING_GROUPS, addSettings, addSharedOptions, addStallOptions, addWorkerHttpOptions, addWorkerOptions, givenFlags
} from './config/options.js'
import type { SendFlags } from './send.js'

/** `version` is what `--version` prints (cli/anvil.ts reads it from the package). */
export function createProgram (version: string): Command {
  const program = new Command('anvil')
    .description('Webhook gateway: verify on raw bytes, dedupe, enqueue on BullMQ, retry, dead-letter, replay.')
    .version(version)
    .configureOutput({ outputError: (text, write) => write(`anvil: ${text.replace(/^error: /, '')}`) })

  addSettings(addObservabilityOptions(addRetentionOptions(addSettings(addIngressOptions(addSharedOptions(program.command('serve'))), SETTING_GROUPS.secrets))), SETTING_GROUPS.admin)
    .description('Receive webhooks: verify, dedupe and enqueue them (needs WEBHOOK_SECRET)')
    .action(async (_flags: unknown, command: Command) => {
      const config = loadServeConfig(process.env, givenFlags(command))
      const { serve } = await import('./serve.js')
      await serve(config)
    })

  addOutgoingOptions(addForwardOptions(addObservabilityOptions(addDeadLetterRetentionOptions(addStallOptions(addWorkerHttpOptions(addWorkerOptions(addSharedOptions(program.command('worker')))))))))
    .description('Process queued webhooks with your handler module, and forward the events of sources that forward')
    .option('--handler <path>', 'module exporting the handler or a router (default export, `handler` or `router`), relative to the working directory; optional when every source forwards')
    .action(async (flags: { handler?: string }, command: Command) => {
      const config = loadWorkerConfig(process.env, givenFlags(command))
      const { runWorker } = await import('./worker.js')
      await runWorker(config, flags.handler)
    })

  addSettings(addSharedOptions(program.command('replay')), ['limit'])
    .description('Replay dead letters onto the queue; prints one JSON line per replay')
    .argument('[id]', 'the dead letter to replay')
    .option('--all', 'replay every dead letter not yet replayed, oldest first')
    .action(async (id: string | undefined, flags: { all?: boolean }, command: Command) => {
      const given = givenFlags(command)
      if ((id === undefined) === (flags.all !== true)) command.error('give either a dead-letter id or --all')
      if (id !== undefined && given.limit !== undefined) command.error('--limit goes with --all, not with an id')
      const config = loadReplayConfig(process.env, given)
      const { replay } = await import('./replay.js')
      await replay(config, id === undefined ? { all: true } : { id })
    })

  program.command('send')
    .description('Sign a webhook as the provider does and POST it; one JSON line per answer (secret: env ANVIL_SEND_SECRET)')
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

  addSettings(program.command('migrate'), SETTING_GROUPS.database)
    .description('Apply the PostgreSQL migrations (outgoing webhooks, the journal); safe to run again and from several processes')
    .action(async (_flags: unknown, command: Command) => {
      const config = loadMigrateConfig(process.env, givenFlags(command))
      const { runMigrate } = await import('./migrate.js')
      await runMigrate(config)
    })

  addObservabilityOptions(addRetentionOptions(addWorkerOptions(addIngressOptions(addSharedOptions(program.command('dev'), DEV_DEFAULTS), DEV_DEFAULTS))))
    .description('Server and a worker in one process, with a private redis-server when none runs')
    .option('--handler <path>', 'your handler module (as for `anvil worker`); default: one that logs each event')
    .action(async (flags: { handler?: string }, command: Command) => {
      const config = loadDevConfig(process.env, givenFlags(command))
      const { dev } = await import('./dev.js')
      await dev(config, process.env, flags.handler)
    })

  return program
}

/**
 * The `anvil` program: its commands, their flags (from the settings table) and their actions. Each command
 * loads its configuration first (so a bad value fails fast, before Fastify or BullMQ are even imported),
 * then imports its module.
 */
import { Command } from 'commander'
import { loadDevConfig, loadServeConfig, loadWorkerConfig } from './config/load-config.js'
import { loadErasureConfig, loadEventTypesConfig, loadJournalConfig, loadMessagesConfig, loadMigrateConfig, loadReplayConfig } from './config/load-database-config.js'
import {
  DEV_DEFAULTS, addDeadLetterRetentionOptions, addForwardOptions, addIngressOptions, addObservabilityOptions, addRetentionOptions,
  SETTING_GROUPS, addSettings, addSharedOptions, addStallOptions, addWorkerHttpOptions, addWorkerOptions, givenFlags
} from './config/options.js'
import type { SendFlags } from './send.js'
import { CATALOG_FORMATS, type CatalogFormat } from '../src/catalog/event-type-documents.js'

/** Commander's accumulator for a repeatable option. */
const collect = (value: string, previous: string[]): string[] => [...previous, value]

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

  addSettings(addForwardOptions(addObservabilityOptions(addDeadLetterRetentionOptions(addStallOptions(addWorkerHttpOptions(addWorkerOptions(addSharedOptions(program.command('worker')))))))), SETTING_GROUPS.workerRole)
    .description('Process queued webhooks with your handler module, and forward the events of sources that forward')
    .option('--handler <path>', 'module exporting the handler or a router (default export, `handler` or `router`), relative to the working directory; optional when every source forwards')
    .action(async (flags: { handler?: string }, command: Command) => {
      const config = loadWorkerConfig(process.env, givenFlags(command))
      const { runWorker } = await import('./worker.js')
      await runWorker(config, flags.handler)
    })

  addSettings(addSharedOptions(program.command('replay')), ['limit', ...SETTING_GROUPS.journal])
    .description('Replay dead letters by id or --all (one JSON line per replay), or the events a --filter matches (the journal with ANVIL_DATABASE_URL, else the dead letters)')
    .argument('[id]', 'the dead letter to replay')
    .option('--all', 'replay every dead letter not yet replayed, oldest first')
    .option('--filter <key=value>', 'replay the events matching: provider, source, type, status, error, since, until, text (repeatable)', collect, [])
    .option('--dry-run', 'with --filter: print how many events would be replayed, and replay none')
    .option('--rate <n>', 'with --filter: at most this many events a second')
    .action(async (id: string | undefined, flags: { all?: boolean, filter: string[], dryRun?: boolean, rate?: string }, command: Command) => {
      const given = givenFlags(command)
      const filtered = flags.filter.length > 0
      if ([id !== undefined, flags.all === true, filtered].filter(Boolean).length !== 1) command.error('give a dead-letter id, --all, or --filter')
      if (id !== undefined && given.limit !== undefined) command.error('--limit goes with --all, not with an id')
      if (!filtered && (flags.dryRun === true || flags.rate !== undefined)) command.error('--dry-run and --rate go with --filter')
      if (filtered) {
        const rate = flags.rate === undefined ? undefined : Number(flags.rate)
        if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1)) command.error(`--rate must be a whole number of events a second, at least 1 (got ${JSON.stringify(flags.rate)})`)
        const config = loadReplayConfig(process.env, given)
        const { parseFilterFlags, replayMatching } = await import('./events.js')
        await replayMatching(config, parseFilterFlags(flags.filter), { dryRun: flags.dryRun === true, rate })
        return
      }
      const config = loadReplayConfig(process.env, given)
      const { replay } = await import('./replay.js')
      await replay(config, id === undefined ? { all: true } : { id })
    })

  const events = program.command('events').description('The event journal (or, without ANVIL_DATABASE_URL, the dead letters): list and show events')
  addSettings(addSettings(addSharedOptions(events.command('list')), SETTING_GROUPS.journal), ['limit'], { limit: { description: 'at most this many events (default 50, at most 500)' } })
    .description('Events, newest first, as a table (or NDJSON with --json)')
    .option('--status <status>', 'received, processing, done, failed or dead (comma-separated for several)')
    .option('--provider <name>', 'the provider, e.g. stripe')
    .option('--source <name>', 'the source name')
    .option('--type <eventType>', 'the event type, exactly')
    .option('--error <class>', 'the last error class: its code, else its name (e.g. ECONNREFUSED, TypeError)')
    .option('--since <time>', 'received since: an ISO time or a duration before now (30m, 2h, 7d)')
    .option('--until <time>', 'received before: an ISO time or a duration before now')
    .option('--text <text>', 'the payload contains this text')
    .option('--json', 'one JSON object per line')
    .action(async (flags: Record<string, string | boolean | undefined>, command: Command) => {
      const config = loadJournalConfig(process.env, givenFlags(command))
      const { listEvents } = await import('./events.js')
      const pick = (name: string): string | undefined => typeof flags[name] === 'string' ? flags[name] : undefined
      const filter = { provider: pick('provider'), source: pick('source'), type: pick('type'), status: pick('status'), errorClass: pick('error'), since: pick('since'), until: pick('until'), text: pick('text') }
      await listEvents(config, Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)), { json: flags.json === true, limit: config.limit })
    })
  addSettings(addSharedOptions(events.command('show')), SETTING_GROUPS.journal)
    .description('One event as JSON: payload, headers, attempts, effects, and the diff against its previous delivery')
    .argument('<id>', 'the event id (or, without a database, the dead letter id)')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const config = loadJournalConfig(process.env, givenFlags(command))
      const { showEvent } = await import('./events.js')
      await showEvent(config, id)
    })

  const messages = program.command('messages').description('The outbox of outgoing webhooks (ANVIL_DATABASE_URL, or the admin API with --url)')
  addSettings(addSharedOptions(messages.command('resend')), [...SETTING_GROUPS.journal, ...SETTING_GROUPS.resend, 'limit'], { limit: { description: 'with --filter: at most this many messages' } })
    .description('Send messages that ended failed (dispatch or delivery) again, to the endpoints without a success and none in flight, under the same webhook-id; one JSON line per message')
    .argument('[id]', 'the message to re-send')
    .option('--filter <key=value>', 'the failed messages matching: failure (dispatch or delivery), type, tenant, since, until (repeatable; none: every failed message)', collect, [])
    .option('--all', 'every failed message (the same as an empty --filter)')
    .option('--dry-run', 'print what would be sent where, and send nothing')
    .action(async (id: string | undefined, flags: { filter: string[], all?: boolean, dryRun?: boolean }, command: Command) => {
      const byFilter = flags.filter.length > 0 || flags.all === true
      if ((id !== undefined) === byFilter) command.error('give a message id, --filter or --all')
      const config = loadMessagesConfig(process.env, givenFlags(command))
      if (id !== undefined && config.limit !== undefined) command.error('--limit goes with --filter or --all, not with an id')
      const { resendMessages } = await import('./messages.js')
      await resendMessages(config, id === undefined ? { filter: flags.filter } : { id }, flags.dryRun === true)
    })

  const eventTypes = program.command('event-types').description('The event-type catalog of outgoing webhooks (ANVIL_DATABASE_URL, or the admin API with --url)')
  addSettings(eventTypes.command('export'), SETTING_GROUPS.journal)
    .description('Print the catalog as a document consumers generate types from: OpenAPI 3.1 (a webhook per type), AsyncAPI 3.0 or one JSON Schema')
    .requiredOption('--format <format>', `the document: ${CATALOG_FORMATS.join(', ')}`)
    .option('--title <title>', 'the document\'s title (default "Webhook events")')
    .option('--api-version <version>', 'the version of your webhooks the document gives (default 1.0.0)')
    .action(async (flags: { format: string, title?: string, apiVersion?: string }, command: Command) => {
      if (!(CATALOG_FORMATS as readonly string[]).includes(flags.format)) command.error(`--format must be ${CATALOG_FORMATS.join(', ')} (got ${JSON.stringify(flags.format)})`)
      const config = loadEventTypesConfig(process.env, givenFlags(command))
      const { exportEventTypes } = await import('./event-types.js')
      await exportEventTypes(config, flags.format as CatalogFormat, { title: flags.title, version: flags.apiVersion })
    })

  const portal = program.command('portal').description('The tenant portal\'s tokens, through the admin API (--url, ANVIL_ADMIN_TOKEN)')
  addSettings(addSharedOptions(portal.command('token')), ['adminUrl'])
    .description('Mint a portal token for one tenant; prints { token, url, expiresAt }: give the url to the tenant')
    .requiredOption('--tenant <tenant>', 'the tenant whose endpoints and deliveries the token opens')
    .option('--ttl <duration>', 'how long it is valid: 30m, 1h, 7d (default 1h, at most 7d)')
    .option('--read-only', 'a token that changes nothing (scope read)')
    .action(async (flags: { tenant: string, ttl?: string, readOnly?: boolean }, command: Command) => {
      const config = loadJournalConfig(process.env, givenFlags(command))
      const { portalToken } = await import('./portal.js')
      await portalToken(config, flags)
    })
  addSettings(addSharedOptions(portal.command('revoke')), ['adminUrl'])
    .description('Revoke every portal token of a tenant issued until now, on every replica')
    .requiredOption('--tenant <tenant>', 'the tenant')
    .action(async (flags: { tenant: string }, command: Command) => {
      const config = loadJournalConfig(process.env, givenFlags(command))
      const { portalRevoke } = await import('./portal.js')
      await portalRevoke(config, flags.tenant)
    })

  // Erasure: `subjects erase <subject>` and `tenants delete <tenant>`, destructive, so each asks for --yes.
  const ERASURES = [
    { group: 'subjects', about: 'Data subjects of outgoing messages and journal events', verb: 'erase', key: 'subject', example: 'the data subject, e.g. user_123',
      description: 'Erase a subject: its messages (with their jobs and delivery log bodies) and its journal events' },
    { group: 'tenants', about: 'Tenants of outgoing webhooks', verb: 'delete', key: 'tenant', example: 'the tenant',
      description: 'Remove a tenant: its endpoints, messages, delivery log, jobs and portal access' }
  ] as const
  for (const { group, about, verb, key, example, description } of ERASURES) {
    addSettings(addSharedOptions(program.command(group).description(`${about} (ANVIL_DATABASE_URL, or the admin API with --url)`).command(verb)), SETTING_GROUPS.journal)
      .description(`${description}; prints the counts as JSON, audited`)
      .argument(`<${key}>`, example)
      .option('--yes', `${verb} for good (without it: nothing is erased, exit 1)`)
      .action(async (value: string, flags: { yes?: boolean }, command: Command) => {
        const config = loadErasureConfig(process.env, givenFlags(command))
        const { erase } = await import('./erasure.js')
        if (!await erase(config, key === 'subject' ? { subject: value } : { tenant: value }, flags.yes === true)) process.exitCode = 1
      })
  }

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

  addSettings(addObservabilityOptions(addRetentionOptions(addWorkerOptions(addIngressOptions(addSharedOptions(program.command('dev'), DEV_DEFAULTS), DEV_DEFAULTS)))), SETTING_GROUPS.devOutbound)
    .description('Server and a worker in one process, with a private redis-server when none runs')
    .option('--handler <path>', 'your handler module (as for `anvil worker`); default: one that logs each event')
    .action(async (flags: { handler?: string }, command: Command) => {
      const config = loadDevConfig(process.env, givenFlags(command))
      const { dev } = await import('./dev.js')
      await dev(config, process.env, flags.handler)
    })

  return program
}

/**
 * `anvil subjects erase` and `anvil tenants delete`: erasure by data subject and removal of a tenant
 * (src/erasure/erasure.ts), through the admin API (--url, ANVIL_ADMIN_TOKEN: audited as that token) or straight to
 * PostgreSQL and Redis (audited as `cli`), with the same functions the routes call.
 */
import type { AdminOrDatabaseConfig } from './config/load-database-config.js'
import { adminCall } from './admin-client.js'
import type { ErasureAudit, SubjectErasure, TenantRemoval } from '../src/erasure/erasure-schemas.js'
import { DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import { readyOutbound } from './redis-patience.js'

/** The audit's actor for an erasure the CLI makes on the database. */
export const CLI_ACTOR = 'cli'

export type ErasureTarget = { subject: string } | { tenant: string }
type Answer = (SubjectErasure | TenantRemoval) & { audit: ErasureAudit }

async function onDatabase (config: AdminOrDatabaseConfig & { admin?: undefined, databaseUrl: string }, target: ErasureTarget): Promise<Answer> {
  const { outboundInternals } = await import('../src/outbox/outbound.js')
  const { openEventLog } = await import('../src/event-log/open-event-log.js')
  const { createErasureAudit } = await import('../src/erasure/erasure-audit.js')
  const { eraseSubject, removeTenant } = await import('../src/erasure/erasure.js')
  const redis = config.redisUrl ?? DEFAULT_REDIS_URL
  const outbound = await readyOutbound({
    database: config.databaseUrl, redis,
    ...(config.dbSchema === undefined ? {} : { schema: config.dbSchema }),
    ...(config.prefix === undefined ? {} : { prefix: config.prefix })
  })
  const log = await openEventLog({
    redis, database: config.databaseUrl, schema: config.dbSchema, queueName: config.queueName, prefix: config.prefix,
    ...(config.journalQueue === undefined ? {} : { journalQueue: config.journalQueue })
  })
  try {
    // As the routes: the outgoing side, the journal's, and the audit with the outgoing webhooks' database.
    const erasers = { audit: createErasureAudit(outboundInternals(outbound).database), outbound: outbound.erasure, ...(log.erasure === undefined ? {} : { journal: log.erasure }) }
    return 'subject' in target ? await eraseSubject(erasers, target.subject, CLI_ACTOR) : await removeTenant(erasers, target.tenant, CLI_ACTOR)
  } finally {
    await log.close()
    await outbound.close()
  }
}

/** The counts as one JSON object on stdout (with the audit entry), and a line on stderr; erases nothing without `yes`. */
export async function erase (config: AdminOrDatabaseConfig, target: ErasureTarget, yes: boolean): Promise<boolean> {
  const what = 'subject' in target ? `every message and event of subject ${JSON.stringify(target.subject)}` : `tenant ${JSON.stringify(target.tenant)}'s endpoints, messages, delivery log and portal access`
  if (!yes) {
    process.stderr.write(`anvil: this erases ${what} for good: pass --yes to do it (nothing was erased)\n`)
    return false
  }
  const path = 'subject' in target ? `/subjects/${encodeURIComponent(target.subject)}` : `/tenants/${encodeURIComponent(target.tenant)}`
  const answer = config.admin !== undefined ? await adminCall(config.admin)<Answer>('DELETE', path) : await onDatabase(config, target)
  process.stdout.write(JSON.stringify(answer) + '\n')
  const { audit, subject: _s, tenant: _t, ...counts } = answer as Answer & { subject?: string, tenant?: string }
  process.stderr.write(`${'subject' in target ? 'erased' : 'removed'}: ${Object.entries(counts).map(([name, n]) => `${name} ${n as number}`).join(', ')} (audit ${audit.id}, actor ${audit.actor})\n`)
  return true
}

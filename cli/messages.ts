/**
 * `anvil messages resend`: outbox messages that ended failed, sent again (src/resend/), by id
 * or by --filter, through the admin API (--url, ANVIL_ADMIN_TOKEN) or straight to PostgreSQL and Redis.
 */
import type { MessagesCliConfig } from './config/load-database-config.js'
import { adminCall } from './admin-client.js'
import { parseFilterFlags } from './events.js'
import { OUTBOUND_MAX_PAGE } from '../src/paging/outbound-page-size.js'
import type { MessageResend, ResendFilter, ResendPage } from '../src/resend/resender.js'
import { DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import { readyOutbound } from './redis-patience.js'

/** `--filter` keys: those of the admin API's filter. */
const RESEND_FILTER_KEYS = { failure: 'failure', type: 'type', tenant: 'tenant', since: 'since', until: 'until' }

interface CliResender {
  one (id: string, dryRun: boolean): Promise<MessageResend>
  page (filter: ResendFilter, options: { dryRun: boolean, limit: number, cursor?: string }): Promise<ResendPage>
  close (): Promise<void>
}

async function openResender (config: MessagesCliConfig): Promise<CliResender> {
  if (config.admin !== undefined) {
    const call = adminCall(config.admin)
    const id = encodeURIComponent
    return {
      one: async (messageId, dryRun) => await call<MessageResend>('POST', `/messages/${id(messageId)}/resend`, { dryRun }),
      page: async (filter, options) => await call<ResendPage>('POST', '/messages/resend', { filter, ...options }),
      close: async () => {}
    }
  }
  const outbound = await readyOutbound({
    database: config.databaseUrl, redis: config.redisUrl ?? DEFAULT_REDIS_URL,
    ...(config.dbSchema === undefined ? {} : { schema: config.dbSchema }),
    ...(config.prefix === undefined ? {} : { prefix: config.prefix }),
    ...(config.outboundRetrySchedule === undefined ? {} : { retrySchedule: config.outboundRetrySchedule })
  })
  return {
    one: async (messageId, dryRun) => await outbound.resend.message(messageId, { dryRun }),
    page: async (filter, options) => await outbound.resend.matching(filter, options),
    close: async () => await outbound.close()
  }
}

/** One JSON line per message on stdout (what was, or would be, sent where), and a count on stderr. */
export async function resendMessages (config: MessagesCliConfig, target: { id: string } | { filter: readonly string[] }, dryRun: boolean): Promise<void> {
  const resender = await openResender(config)
  let messages = 0
  let endpoints = 0
  const print = (item: MessageResend): void => {
    messages += item.endpointIds.length > 0 ? 1 : 0
    endpoints += item.endpointIds.length
    process.stdout.write(JSON.stringify(item) + '\n')
  }
  try {
    if ('id' in target) {
      print(await resender.one(target.id, dryRun))
    } else {
      const filter = parseFilterFlags(target.filter, RESEND_FILTER_KEYS) as ResendFilter
      let left = config.limit ?? Infinity
      let cursor: string | undefined
      do {
        const page = await resender.page(filter, { dryRun, limit: Math.min(left, OUTBOUND_MAX_PAGE), ...(cursor === undefined ? {} : { cursor }) })
        page.items.forEach(print)
        left -= page.items.length
        cursor = page.next ?? undefined
      } while (cursor !== undefined && left > 0)
    }
    process.stderr.write(`${dryRun ? 'would re-send' : 're-sent'} ${messages} ${messages === 1 ? 'message' : 'messages'}, ${endpoints} ${endpoints === 1 ? 'delivery' : 'deliveries'} in all\n`)
  } finally {
    await resender.close()
  }
}

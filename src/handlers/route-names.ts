import { readPath } from '../shared/read-path.js'

/** Providers whose events carry an `action` in the body, routed as `<type>.<action>` before `<type>`. */
const WITH_ACTIONS: ReadonlySet<string> = new Set(['github', 'linear'])

/** Discord's interaction types by number (the job keeps the number; the router names them as Discord's docs do). */
const DISCORD_INTERACTIONS: Readonly<Record<string, string>> = {
  1: 'PING', 2: 'APPLICATION_COMMAND', 3: 'MESSAGE_COMPONENT', 4: 'APPLICATION_COMMAND_AUTOCOMPLETE', 5: 'MODAL_SUBMIT'
}

export interface RouteNames {
  /** Most specific first: `github:pull_request.opened`, `github:pull_request`. Empty without an event type. */
  names: string[]
  action?: string
}

/**
 * The names an event is routed under. The type is the job's (`eventType`); an `anvil` event without one is
 * typed by its body's `type` field, the convention of Anvil's own test events.
 */
export function routeNames (provider: string, eventType: string | undefined, body: () => unknown): RouteNames {
  let type = eventType
  if (type === undefined && provider === 'anvil') type = readPath(body(), 'type')
  if (type === undefined) return { names: [] }
  if (provider === 'discord') type = DISCORD_INTERACTIONS[type] ?? type
  const action = WITH_ACTIONS.has(provider) ? readPath(body(), 'action') : undefined
  const base = `${provider}:${type}`
  return action === undefined ? { names: [base] } : { names: [`${base}.${action}`, base], action }
}

/**
 * The one line `anvil` prints for a problem the user has to fix: no stack trace, newlines folded, and
 * "Invalid configuration: …" read as "anvil: invalid configuration: …" ("REDIS_URL …" stays as is).
 */
export function errorLine (err: unknown): string {
  const message = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ')
  const sentence = /^[A-Z][a-z]/.test(message) ? message.charAt(0).toLowerCase() + message.slice(1) : message
  return `anvil: ${sentence}`
}

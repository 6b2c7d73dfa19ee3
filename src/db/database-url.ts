import { redactUrl } from '../shared/redact-url.js'

/** The problem with a PostgreSQL URL as one line (the password never quoted), or undefined when it is usable. */
export function databaseUrlProblem (url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'is not a URL'
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    return `must start with postgres:// or postgresql://, got ${parsed.protocol}//`
  }
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return 'has no host'
  return undefined
}

/** The URL with its credentials hidden, for messages and logs (one rule for every URL: src/shared/redact-url.ts). */
export const redactDatabaseUrl = redactUrl

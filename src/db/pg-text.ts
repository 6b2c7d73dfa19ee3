/** PostgreSQL's text refuses NUL; a sender's event type may hold one. */
export function pgText (value: string | undefined): string | null {
  return value === undefined ? null : value.includes('\0') ? value.replaceAll('\0', '') : value
}

/** An error's message, or what was thrown as text. */
export function errorMessageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

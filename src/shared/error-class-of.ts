/** How an error is classed for queries: its code when it has one (`ECONNREFUSED`, `ANVIL_ERR_…`), else its name. */
export function errorClassOf (err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code
    return typeof code === 'string' && code !== '' ? code : err.name
  }
  return typeof err
}

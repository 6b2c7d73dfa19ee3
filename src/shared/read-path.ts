/**
 * The value at a dotted path (`data.object.id`) of a parsed body, as an id: a non-empty string, or a finite
 * number as a string. Anything else, or a path that leads nowhere, is undefined.
 */
export function readPath (value: unknown, path: string | readonly string[]): string | undefined {
  let current = value
  for (const part of typeof path === 'string' ? path.split('.') : path) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<string, unknown>)[part]
  }
  if (typeof current === 'string' && current !== '') return current
  if (typeof current === 'number' && Number.isFinite(current)) return String(current)
  return undefined
}

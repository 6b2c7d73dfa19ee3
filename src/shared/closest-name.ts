/**
 * The name in `known` that `given` most likely meant: the singular or plural of it, a name it begins
 * (`timeout` for `timeoutMs`), or one at most two edits away (`concurency`). Undefined when none is that close.
 */
export function closestName (given: string, known: readonly string[]): string | undefined {
  const lower = given.toLowerCase()
  let best: { name: string, distance: number } | undefined
  for (const name of known) {
    const candidate = name.toLowerCase()
    if (candidate === `${lower}s` || `${candidate}s` === lower || (lower.length >= 4 && candidate.startsWith(lower))) return name
    const distance = editDistance(lower, candidate)
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name, distance }
  }
  return best?.name
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost)
    }
    previous = current
  }
  return previous[b.length] as number
}

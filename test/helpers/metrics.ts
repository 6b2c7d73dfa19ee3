/** Prometheus text exposition, read back into `name{label="value",…}` → number, for exact assertions. */
export function parseMetrics (text: string): Map<string, number> {
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    samples.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return samples
}

/** The value of one sample; labels in any order. Undefined when the series does not exist. */
export function sample (samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`)
  for (const [series, value] of samples) {
    const brace = series.indexOf('{')
    const seriesName = brace === -1 ? series : series.slice(0, brace)
    if (seriesName !== name) continue
    const have = brace === -1 ? [] : series.slice(brace + 1, -1).split(',')
    if (wanted.length === have.length && wanted.every((pair) => have.includes(pair))) return value
  }
  return undefined
}

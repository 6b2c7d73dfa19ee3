/** A span of time as people write it in a filter or a window: a whole number and a unit, `30s`, `15m`, `2h`, `7d`, `1w`. */
export const DURATION_PATTERN = '^(\\d{1,9})(s|m|h|d|w)$'
export const DURATION_RULE = 'a whole number and a unit: s, m, h, d or w (30m, 24h, 7d)'

const DURATION = new RegExp(DURATION_PATTERN)
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** The duration in milliseconds, or undefined when `text` is not one. */
export function parseDuration (text: string): number | undefined {
  const match = DURATION.exec(text)
  return match === null ? undefined : Number(match[1]) * (UNIT_MS[match[2] as string] as number)
}

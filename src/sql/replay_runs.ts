/** The bulk replays' statements, one each. */
import { qualify } from './qualify.js'

/** Retention: finished runs last updated more than `$1` days ago. */
export const deleteFinished = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'replay_runs')} WHERE state <> 'running' AND updated_at < now() - make_interval(days => $1)`

/** The deployment's one row (migration 0004). */
import { qualify } from '../db/qualify.js'

export const id = (schema: string): string => `SELECT id FROM ${qualify(schema, 'deployment')}`

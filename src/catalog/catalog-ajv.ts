/**
 * The one Ajv setup the catalog checks data with: draft-07 with the formats ajv-formats knows, and `pattern`,
 * `patternProperties` and `propertyNames` run by RE2 (re2-wasm), whose time is linear in the input. A pattern
 * RE2 cannot run (a look-around, a back-reference: what backtracks) fails the compile, so it is refused when the
 * type is saved, naming the operator RE2 lacks.
 */
import AjvModule, { type ErrorObject } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { RE2 } from 're2-wasm'

const Ajv = AjvModule.default
const addFormats = addFormatsModule.default

/** ajv's regExp engine: RE2 takes unicode patterns only, as ajv's `unicodeRegExp` (on by default) asks. */
const re2 = Object.assign((pattern: string, flags: string) => new RE2(pattern, flags.includes('u') ? flags : `${flags}u`), {
  code: 'require("re2-wasm").RE2'
})

/** A fresh Ajv: each type is compiled in one of its own, so two types (or two versions of one) may share an `$id`. */
export function catalogAjv (): InstanceType<typeof Ajv> {
  // The formats ajv-formats knows (date-time, email, uri, uuid, …) are checked; any other is a note for consumers.
  return addFormats(new Ajv({ strict: false, logger: false, code: { regExp: re2 } }))
}

/** `data/amount: must be integer`: where in the data, then what is wrong (ajv's words; never the value). */
export function describeError (error: ErrorObject): string {
  const missing = error.keyword === 'required' ? `/${String((error.params as { missingProperty?: string }).missingProperty)}` : ''
  const extra = error.keyword === 'additionalProperties' ? `/${String((error.params as { additionalProperty?: string }).additionalProperty)}` : ''
  return `data${error.instancePath}${missing}${extra}: ${error.message ?? 'is invalid'}`
}

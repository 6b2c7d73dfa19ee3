/**
 * Encryption at rest of what an endpoint keeps for its receiver (a client certificate's key, an OAuth client
 * secret, the signing secrets and keys, custom header values): AES-256-GCM under the operator's keys. A list of
 * keys rotates them: the first seals, every one opens what it sealed (each sealed value names its key). A value
 * not sealed (written before a key was set) is read as it is, so setting a key needs no migration; the next
 * write of the value seals it.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { errors } from '../shared/errors.js'
import { throwInvalid } from '../shared/validate.js'

/** What a sealed value starts with: `anvil:enc:v1:<key id>:<base64url of iv, ciphertext and tag>`. */
export const SEALED_PREFIX = 'anvil:enc:v1:'
const IV_BYTES = 12
const TAG_BYTES = 16
export const ENCRYPTION_KEY_RULE = '32 bytes as 64 hex digits or base64 (make one with `openssl rand -base64 32`); several comma-separated to rotate, the first encrypts'

export interface EncryptionKeys {
  /** Sealed under the first key. */
  seal (text: string): string
  /** The text of a sealed value, or a value never sealed as it is; throws AT_REST_KEY when no key given opens it. */
  open (value: string): string
}

/** The keys as given: one string, a comma-separated list, or an array. */
export type EncryptionKeyInput = string | readonly string[]

function listOf (input: EncryptionKeyInput): string[] {
  return (typeof input === 'string' ? input.split(',') : [...input]).map((key) => key.trim())
}

function keyBytes (key: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(key)) return Buffer.from(key, 'hex')
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(key)) return undefined
  const bytes = Buffer.from(key, 'base64')
  return bytes.length === 32 ? bytes : undefined
}

/** The problem with the keys as one line that never quotes a key, or undefined. */
export function encryptionKeyProblem (input: EncryptionKeyInput | undefined): string | undefined {
  if (input === undefined) return undefined
  const keys = listOf(input)
  if (keys.length === 0) return `encryptionKey must be ${ENCRYPTION_KEY_RULE}`
  const bad = keys.findIndex((key) => keyBytes(key) === undefined)
  if (bad === -1) return undefined
  return `encryptionKey${keys.length > 1 ? ` (key ${bad + 1} of ${keys.length})` : ''} must be ${ENCRYPTION_KEY_RULE}`
}

const keyId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 8)

/** True when `value` was sealed (by any key). */
export const isSealed = (value: string): boolean => value.startsWith(SEALED_PREFIX)

/** The sealer of `input` (checked with encryptionKeyProblem first); undefined input: none, values stay as written. */
export function encryptionKeys (input: EncryptionKeyInput | undefined): EncryptionKeys | undefined {
  if (input === undefined) return undefined
  throwInvalid(encryptionKeyProblem(input))
  const keys = listOf(input).map((key) => keyBytes(key) as Buffer)
  const byId = new Map(keys.map((key) => [keyId(key), key]))
  const first = keys[0] as Buffer
  const firstId = keyId(first)
  return {
    seal (text) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', first, iv)
      const sealed = Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()])
      return `${SEALED_PREFIX}${firstId}:${sealed.toString('base64url')}`
    },
    open (value) {
      return openWith(byId, value)
    }
  }
}

/** Opens a sealed value with the key it names; a plain value is returned as it is. */
function openWith (byId: ReadonlyMap<string, Buffer>, value: string): string {
  if (!isSealed(value)) return value
  const [id = '', body = ''] = value.slice(SEALED_PREFIX.length).split(':')
  const key = byId.get(id)
  if (key === undefined) throw new errors.AT_REST_KEY(`a value was sealed with key ${id}, which is not among the configured encryption keys`)
  const bytes = Buffer.from(body, 'base64url')
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES))
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8')
  } catch {
    throw new errors.AT_REST_KEY(`a value sealed with key ${id} does not open (changed, or cut)`)
  }
}

/** Opens a value where no key is configured: a plain value as it is; a sealed one cannot be read. */
export function openPlain (value: string): string {
  return openWith(new Map(), value)
}

/** `keys.open`, or without keys `openPlain`. */
export const openAtRest = (keys: EncryptionKeys | undefined, value: string): string => keys === undefined ? openPlain(value) : keys.open(value)
/** `keys.seal`, or without keys the value as it is. */
export const sealAtRest = (keys: EncryptionKeys | undefined, value: string): string => keys === undefined ? value : keys.seal(value)

/**
 * Request ids travel from the sender's `x-request-id` into log lines and job data, so only a short id of
 * plain characters is kept: a sender cannot put line breaks, JSON or a megabyte into either.
 */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:/+=@-]{1,128}$/
export const REQUEST_ID_RULE = '1 to 128 characters of A-Z a-z 0-9 . _ : / + = @ -'

export function isRequestId (value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID_PATTERN.test(value)
}

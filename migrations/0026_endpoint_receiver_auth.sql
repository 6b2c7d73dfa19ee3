-- How an endpoint authenticates to its receiver: `tls` (a CA to trust, a client certificate and its key, the key
-- encrypted) and `oauth` (client credentials for a bearer token, the secret encrypted); neither secret is answered.
ALTER TABLE {{schema}}.endpoints ADD COLUMN tls jsonb;
ALTER TABLE {{schema}}.endpoints ADD COLUMN oauth jsonb;

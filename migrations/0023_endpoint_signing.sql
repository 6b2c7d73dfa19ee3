-- How an endpoint's Standard Webhooks deliveries are signed: HMAC-SHA256 (`v1`, a `whsec_` secret) or Ed25519
-- (`v1a`, a `whsk_` signing key in endpoint_secrets, never answered), with the current key's `whpk_` public key.
ALTER TABLE {{schema}}.endpoints ADD COLUMN signing text NOT NULL DEFAULT 'hmac' CHECK (signing IN ('hmac', 'ed25519'));
ALTER TABLE {{schema}}.endpoints ADD COLUMN public_key text;

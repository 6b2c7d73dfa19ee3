-- An endpoint's custom headers, sent with each delivery: `{ name: value }`, names in lower case. The values may be
-- credentials: the admin API answers the names only, and the delivery log keeps each value as [redacted].
ALTER TABLE {{schema}}.endpoints ADD COLUMN headers jsonb NOT NULL DEFAULT '{}'::jsonb;

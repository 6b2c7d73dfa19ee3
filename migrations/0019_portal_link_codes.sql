-- The tenant portal's links carry a one-time code, not a token: the page exchanges it for its session once, so the
-- link left in the browser's history opens nothing. A code is kept as its SHA-256 only, with the claims of the session
-- it opens; `used_at` set marks it spent. Rows are deleted a day after they expire.
CREATE TABLE {{schema}}.portal_link_codes (
  code_hash text PRIMARY KEY,
  claims jsonb NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX portal_link_codes_expires ON {{schema}}.portal_link_codes (expires_at);

-- Portal tokens: a tenant's revocation. Every portal token of the tenant issued at or before revoked_before is
-- refused; the admin API reads the row by its key on each request with a portal token.
CREATE TABLE {{schema}}.portal_revocations (
  tenant text PRIMARY KEY,
  revoked_before timestamptz NOT NULL
);

-- The tenant portal's rate limits: one row per limit and key (a tenant, or a portal token's hash) counting the
-- requests of the current minute. Each request counts itself in one statement (an upsert under the row's lock),
-- so every replica shares the count and none can pass the limit together with another.
CREATE TABLE {{schema}}.portal_counters (
  key text PRIMARY KEY,
  window_start timestamptz NOT NULL,
  count integer NOT NULL
);
CREATE INDEX portal_counters_window ON {{schema}}.portal_counters (window_start);

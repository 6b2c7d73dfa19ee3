-- The portal's message page and endpoint overview.
-- What an attempt sent and got back besides the body: the request's headers (the signature cut short) and the
-- answer's, each a capped JSON object (src/delivery/attempt-headers.ts); NULL on rows written before this.
ALTER TABLE {{schema}}.deliveries ADD COLUMN request_headers jsonb;
ALTER TABLE {{schema}}.deliveries ADD COLUMN response_headers jsonb;
-- An endpoint's outcomes over a time window (its success rate, deliveries by outcome over time, p50 latency),
-- read from the index alone. On a large log build it first with CREATE INDEX CONCURRENTLY.
CREATE INDEX IF NOT EXISTS deliveries_endpoint_created ON {{schema}}.deliveries (endpoint_id, created_at) INCLUDE (status, duration_ms);

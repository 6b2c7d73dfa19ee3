-- The journal's PostgreSQL-native queue (`journal: { queue: 'postgres' }`, no Redis round trip per event): the ingress
-- inserts an accepted event here instead of a BullMQ add, and workers claim batches of rows with
-- FOR UPDATE SKIP LOCKED, woken by NOTIFY. A row lives while its event is queued, running or waiting for a retry;
-- the event's outcome is its journal row (written once, as with BullMQ), and the row is deleted after it. So the
-- table holds only the work in flight and is not partitioned.
CREATE TABLE {{schema}}.webhook_event_queue (
  job_id text PRIMARY KEY,
  -- The idempotency key: one queued job per key (ON CONFLICT DO NOTHING); a journal replay takes the row over.
  dedupe_key text NOT NULL,
  -- The journal's id of the event (its row's id) and when it was received (its row's partition).
  event_id text NOT NULL,
  received_at timestamptz NOT NULL,
  source text NOT NULL,
  provider text,
  event_type text,
  provider_event_id text,
  content_type text,
  headers jsonb NOT NULL DEFAULT '{}'::jsonb,
  signature text,
  request_id text,
  retry_schedule integer[] NOT NULL DEFAULT '{}',
  replay_of text,
  payload bytea COMPRESSION lz4 NOT NULL,
  -- When the next attempt may start; a claim leases the row until locked_until (a worker that dies loses it).
  run_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  -- Attempts finished (failed) and attempts begun: a row begun more often than finished ran before (a crash).
  attempts_made integer NOT NULL DEFAULT 0,
  attempts_started integer NOT NULL DEFAULT 0
) WITH (fillfactor = 80);
CREATE UNIQUE INDEX webhook_event_queue_dedupe_key ON {{schema}}.webhook_event_queue (dedupe_key);
-- The claim: the rows due, oldest first.
CREATE INDEX webhook_event_queue_run_at ON {{schema}}.webhook_event_queue (run_at);

-- A claim of the journal's queue writes its lease without writing the row's payload again: the lease columns come
-- first and each page keeps room, so the claim is a HOT update on the same page, whose WAL record holds only the
-- bytes between the unchanged head and the unchanged tail (about 30 bytes instead of the whole 1-2 KB row).
-- The table holds only the events in flight: the room costs little. Rows are copied forward.
ALTER TABLE {{schema}}.webhook_event_queue RENAME TO webhook_event_queue_unleased;
CREATE TABLE {{schema}}.webhook_event_queue (
  -- When the next attempt may start; a claim leases the row until locked_until (a worker that dies loses it).
  run_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  -- Attempts finished (failed) and attempts begun: a row begun more often than finished ran before (a crash).
  attempts_made integer NOT NULL DEFAULT 0,
  attempts_started integer NOT NULL DEFAULT 0,
  job_id text NOT NULL,
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
  payload bytea COMPRESSION lz4 NOT NULL
) WITH (fillfactor = 40);
INSERT INTO {{schema}}.webhook_event_queue (run_at, locked_until, attempts_made, attempts_started, job_id, dedupe_key, event_id,
    received_at, source, provider, event_type, provider_event_id, content_type, headers, signature, request_id, retry_schedule, replay_of, payload)
  SELECT run_at, locked_until, attempts_made, attempts_started, job_id, dedupe_key, event_id,
    received_at, source, provider, event_type, provider_event_id, content_type, headers, signature, request_id, retry_schedule, replay_of, payload
  FROM {{schema}}.webhook_event_queue_unleased;
DROP TABLE {{schema}}.webhook_event_queue_unleased;
ALTER TABLE {{schema}}.webhook_event_queue ADD CONSTRAINT webhook_event_queue_pkey PRIMARY KEY (job_id);
CREATE UNIQUE INDEX webhook_event_queue_dedupe_key ON {{schema}}.webhook_event_queue (dedupe_key);
-- The claim: the rows due, oldest first.
CREATE INDEX webhook_event_queue_run_at ON {{schema}}.webhook_event_queue (run_at);

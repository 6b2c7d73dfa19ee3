-- Moves the journal to write-once rows, one per delivery, in tables partitioned by the UTC day received.
--
-- A delivery's row is written with its outcome, in the handler's transaction when it has one, and never updated
-- on success: the row is the job's done mark (its job_id and status `done`), so `webhook_event_done` goes. The
-- payload is stored once (bytea, lz4 where the server has it); its JSON view is built on read. A redelivery of
-- an id (another received_at) is a row of its own: the detail reads the id's earlier rows for its diff.
--
-- Every table that grows with the events is partitioned by the event's received_at (UTC days), so retention
-- drops a day instead of deleting rows. A partitioned table's unique keys include the partition key: the row's
-- key is (id, received_at), one per delivery. Dedupe stays where it was (the ingress, in Redis). The effects of
-- `once()` keep a table of their own, not partitioned: their key must be unique across deliveries of an event.
-- The DEFAULT partitions catch a row whose day has no partition yet (the worker makes days ahead).
ALTER TABLE {{schema}}.webhook_events RENAME TO webhook_events_0011;
ALTER INDEX {{schema}}.webhook_events_pkey RENAME TO webhook_events_0011_pkey;
ALTER INDEX {{schema}}.webhook_events_status_received_at RENAME TO webhook_events_0011_status;
ALTER INDEX {{schema}}.webhook_events_provider_event_type RENAME TO webhook_events_0011_provider;
ALTER INDEX {{schema}}.webhook_events_received_at RENAME TO webhook_events_0011_received;
DROP VIEW {{schema}}.webhook_event_attempts;
ALTER TABLE {{schema}}.webhook_event_failures RENAME TO webhook_event_failures_0011;
ALTER INDEX {{schema}}.webhook_event_failures_event_id_attempt RENAME TO webhook_event_failures_0011_event;

CREATE TABLE {{schema}}.webhook_events (
  id text NOT NULL,
  received_at timestamptz NOT NULL,
  source text NOT NULL,
  provider text,
  event_type text,
  dedupe_key text NOT NULL,
  status text NOT NULL DEFAULT 'received'
    CHECK (status IN ('received', 'processing', 'done', 'failed', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  job_id text,
  -- The last attempt: when it began and ended (the attempt log's row of a `done`).
  started_at timestamptz,
  processed_at timestamptz,
  last_error text,
  error_class text,
  retry_schedule integer[] NOT NULL DEFAULT '{}',
  replay_generation integer NOT NULL DEFAULT 0,
  -- Rows migrated from before 0013 kept one row per id: their count of deliveries and the one before the last.
  deliveries integer NOT NULL DEFAULT 1,
  previous_delivery jsonb,
  content_type text,
  headers jsonb NOT NULL DEFAULT '{}'::jsonb,
  signature text,
  request_id text,
  payload bytea COMPRESSION lz4 NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_events_pkey PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);
-- The admin list newest first, the stats, replay pages, retention of the DEFAULT partition.
CREATE INDEX webhook_events_received_at ON {{schema}}.webhook_events (received_at, id);
-- Status filters. `done` rows, nearly all of them, are not in it: the hot path writes no entry, and a list of
-- `done` events reads received_at backwards, where they are most rows.
CREATE INDEX webhook_events_status_received_at ON {{schema}}.webhook_events (status, received_at) WHERE status <> 'done';
CREATE INDEX webhook_events_provider_event_type ON {{schema}}.webhook_events (provider, event_type);

-- The attempt log: failed attempts, and the `done` of a job a replay has since moved on from. The current
-- row's own `done` is the row (the view below adds it). Its sequence continues 0002's.
CREATE SEQUENCE {{schema}}.webhook_event_failures_id_seq;
SELECT setval('{{schema}}.webhook_event_failures_id_seq', greatest(
  (SELECT last_value FROM {{schema}}.webhook_event_attempts_id_seq), 1));
CREATE TABLE {{schema}}.webhook_event_failures (
  id bigint NOT NULL DEFAULT nextval('{{schema}}.webhook_event_failures_id_seq'),
  event_id text NOT NULL,
  event_received_at timestamptz NOT NULL,
  attempt integer NOT NULL,
  started_at timestamptz,
  finished_at timestamptz NOT NULL DEFAULT now(),
  status text NOT NULL CHECK (status IN ('done', 'failed')),
  error_class text,
  error text,
  job_id text
) PARTITION BY RANGE (event_received_at);
CREATE INDEX webhook_event_failures_event ON {{schema}}.webhook_event_failures (event_id, event_received_at, attempt);

CREATE TABLE {{schema}}.webhook_events_default PARTITION OF {{schema}}.webhook_events DEFAULT;
CREATE TABLE {{schema}}.webhook_event_failures_default PARTITION OF {{schema}}.webhook_event_failures DEFAULT;
-- A day for every day the old rows have, and today and the two after (UTC); the worker keeps days ahead.
DO $$
DECLARE
  day date;
BEGIN
  FOR day IN SELECT DISTINCT (received_at AT TIME ZONE 'UTC')::date FROM {{schema}}.webhook_events_0011
    UNION SELECT (now() AT TIME ZONE 'UTC')::date + n FROM generate_series(0, 2) AS n
  LOOP
    EXECUTE format('CREATE TABLE {{schema}}.%I PARTITION OF {{schema}}.webhook_events FOR VALUES FROM (%L) TO (%L)',
      'webhook_events_' || to_char(day, 'YYYYMMDD'), day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
    EXECUTE format('CREATE TABLE {{schema}}.%I PARTITION OF {{schema}}.webhook_event_failures FOR VALUES FROM (%L) TO (%L)',
      'webhook_event_failures_' || to_char(day, 'YYYYMMDD'), day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
  END LOOP;
END $$;

INSERT INTO {{schema}}.webhook_events (id, received_at, source, provider, event_type, dedupe_key, status, attempts, job_id,
    started_at, processed_at, last_error, error_class, retry_schedule, replay_generation, deliveries, previous_delivery,
    content_type, headers, signature, request_id, payload, updated_at)
  SELECT e.id, e.received_at, e.source, e.provider, e.event_type, e.dedupe_key, e.status, e.attempts, e.job_id,
    d.started_at, e.processed_at, e.last_error, e.error_class, e.retry_schedule, e.replay_generation, e.deliveries, e.previous_delivery,
    e.content_type, e.headers, e.signature, e.request_id, e.payload, e.updated_at
  FROM {{schema}}.webhook_events_0011 e
  LEFT JOIN {{schema}}.webhook_event_done d ON e.status = 'done' AND d.event_id = e.id AND d.job_id = e.job_id;
INSERT INTO {{schema}}.webhook_event_failures (id, event_id, event_received_at, attempt, started_at, finished_at, status, error_class, error, job_id)
  SELECT f.id, f.event_id, e.received_at, f.attempt, f.started_at, f.finished_at, 'failed', f.error_class, f.error, f.job_id
  FROM {{schema}}.webhook_event_failures_0011 f JOIN {{schema}}.webhook_events_0011 e ON e.id = f.event_id;
-- A done mark the row does not stand for (its job was replayed since) stays in the log.
INSERT INTO {{schema}}.webhook_event_failures (id, event_id, event_received_at, attempt, started_at, finished_at, status, job_id)
  SELECT d.id, d.event_id, e.received_at, d.attempt, d.started_at, d.finished_at, 'done', d.job_id
  FROM {{schema}}.webhook_event_done d JOIN {{schema}}.webhook_events_0011 e ON e.id = d.event_id
  WHERE NOT (e.status = 'done' AND e.job_id = d.job_id);

-- Effects outlive the FK to a partitioned row (a key it cannot reference); retention deletes them by age.
ALTER TABLE {{schema}}.webhook_effects DROP CONSTRAINT webhook_effects_event_id_fkey;
CREATE INDEX webhook_effects_created_at ON {{schema}}.webhook_effects (created_at);

DROP TABLE {{schema}}.webhook_event_done;
DROP TABLE {{schema}}.webhook_event_failures_0011;
DROP TABLE {{schema}}.webhook_events_0011;

-- The attempt log as before: the log's rows, and each row's own `done` (ordered last: it is the latest attempt).
CREATE VIEW {{schema}}.webhook_event_attempts AS
  SELECT id, event_id, event_received_at, attempt, started_at, finished_at, status, error_class, error, job_id
    FROM {{schema}}.webhook_event_failures
  UNION ALL
  SELECT NULL::bigint, id, received_at, attempts, started_at, coalesce(processed_at, updated_at), 'done', NULL, NULL, job_id
    FROM {{schema}}.webhook_events WHERE status = 'done';

-- Raised by the write of an outcome the row refuses (its job has committed `done`, or a replay moved the row to
-- another job), so a transaction that sent its COMMIT in the same round trip rolls back instead.
CREATE FUNCTION {{schema}}.journal_refused() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'anvil journal: the event''s row refused this job''s outcome' USING ERRCODE = 'AJ001';
END $$;

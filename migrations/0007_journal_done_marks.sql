-- A lean transaction per event: a job's `done` is a narrow row of its own (one index), committed with the
-- handler's writes, instead of an update of the event's big row (status is indexed: never a HOT update) and an
-- attempt row with three indexes; the event's status follows in the worker's batched write. The attempt log
-- keeps its name as a view: failed attempts (the table, renamed) and done marks, with their ids.
ALTER TABLE {{schema}}.webhook_event_attempts RENAME TO webhook_event_failures;
ALTER INDEX {{schema}}.webhook_event_attempts_event_id_attempt RENAME TO webhook_event_failures_event_id_attempt;

CREATE TABLE {{schema}}.webhook_event_done (
  event_id text NOT NULL REFERENCES {{schema}}.webhook_events (id) ON DELETE CASCADE,
  job_id text NOT NULL,
  attempt integer NOT NULL,
  started_at timestamptz,
  finished_at timestamptz NOT NULL DEFAULT now(),
  -- The attempt log's order: the failures' sequence (0002's identity, which keeps its name).
  id bigint NOT NULL DEFAULT nextval('{{schema}}.webhook_event_attempts_id_seq'::regclass),
  CONSTRAINT webhook_event_done_once PRIMARY KEY (event_id, job_id)
);

INSERT INTO {{schema}}.webhook_event_done (event_id, job_id, attempt, started_at, finished_at, id)
  SELECT event_id, coalesce(job_id, ''), attempt, started_at, finished_at, id FROM {{schema}}.webhook_event_failures
  WHERE status = 'done' ON CONFLICT DO NOTHING;
DELETE FROM {{schema}}.webhook_event_failures WHERE status = 'done';
DROP INDEX {{schema}}.webhook_event_attempts_done_once;

CREATE VIEW {{schema}}.webhook_event_attempts AS
  SELECT id, event_id, attempt, started_at, finished_at, status, error_class, error, job_id FROM {{schema}}.webhook_event_failures
  UNION ALL
  SELECT id, event_id, attempt, started_at, finished_at, 'done', NULL, NULL, job_id FROM {{schema}}.webhook_event_done;

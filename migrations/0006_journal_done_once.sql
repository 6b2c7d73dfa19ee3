-- A job marks its event `done` at most once. The handler's transaction writes the job's `done` attempt row
-- with its writes; a second run of the same job (a stall, a crash after the commit, a redelivery) that reaches
-- its commit is refused by this index, and its transaction rolls back with the handler's writes. Duplicates an
-- earlier version wrote are folded into the first, so the index can be built.
DELETE FROM {{schema}}.webhook_event_attempts a
  USING {{schema}}.webhook_event_attempts b
  WHERE a.status = 'done' AND b.status = 'done' AND a.event_id = b.event_id AND a.job_id = b.job_id AND a.id > b.id;
CREATE UNIQUE INDEX webhook_event_attempts_done_once ON {{schema}}.webhook_event_attempts (event_id, job_id) WHERE status = 'done';

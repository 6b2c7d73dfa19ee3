-- The delivery log holds an attempt before its POST: a row is written `started` and completed with its outcome,
-- so a worker that dies mid-POST leaves a row the undelivered view and recover see, and a re-send is a row of its own.
ALTER TABLE {{schema}}.deliveries DROP CONSTRAINT deliveries_status_check;
ALTER TABLE {{schema}}.deliveries ADD CONSTRAINT deliveries_status_check CHECK (status IN ('started', 'success', 'failed'));
-- The BullMQ job that made the attempt (NULL on rows written before this migration).
ALTER TABLE {{schema}}.deliveries ADD COLUMN job_id text;
-- A job taken back after a stall settles its attempts left `started` and counts its stalls.
CREATE INDEX deliveries_job_unsettled ON {{schema}}.deliveries (job_id) WHERE status = 'started' OR error_class = 'stalled';

-- How many of its job's stalls a row accounts for (the job's stall count when the row was written or settled):
-- a job taken back after a stall counts only the stalls no row accounts for yet, so an attempt whose outcome was
-- logged just before its worker died is not counted a second time as a stall. NULL on rows written before.
ALTER TABLE {{schema}}.deliveries ADD COLUMN job_stalls integer;

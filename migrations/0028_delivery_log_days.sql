-- The delivery log partitioned by day, so retention drops a day instead of deleting rows one by one.
--
-- A partitioned table's unique keys include its partition key: `deliveries` is keyed (id, created_at). A lookup by
-- id alone would read every day, so an id says its row's second: the second of its created_at shifted left 20 bits,
-- and the low 20 bits of a sequence (a trigger sets it from the row's created_at, whoever writes the row). A lookup
-- by id reads the one day of that second (delivery_from, delivery_until); ids still follow time for the lists' order
-- and cursors, and stay below 2^53 (exact in JavaScript) until the year 2242. Rows moved from before keep their ids
-- (below 2^50): a lookup of one of them reads the days up to this migration, which retention drops in time.
-- The log had no other unique key and no foreign key. The DEFAULT partition catches a row whose day has no
-- partition yet (the retention pass makes days ahead).
-- Run it in a quiet hour: it copies the log in one transaction, and writes to the log wait for it.
ALTER TABLE {{schema}}.deliveries RENAME TO deliveries_unpartitioned;
ALTER INDEX {{schema}}.deliveries_pkey RENAME TO deliveries_unpartitioned_pkey;
DROP INDEX {{schema}}.deliveries_endpoint, {{schema}}.deliveries_status, {{schema}}.deliveries_message, {{schema}}.deliveries_created,
  {{schema}}.deliveries_job_unsettled, {{schema}}.deliveries_unresolved, {{schema}}.deliveries_endpoint_unresolved,
  {{schema}}.deliveries_endpoint_created, {{schema}}.deliveries_undelivered_created, {{schema}}.deliveries_undelivered_tenant,
  {{schema}}.deliveries_undelivered_type;

CREATE SEQUENCE {{schema}}.delivery_id_seq;
CREATE FUNCTION {{schema}}.delivery_id(at timestamptz) RETURNS bigint LANGUAGE sql VOLATILE
  RETURN (floor(extract(epoch FROM at))::bigint << 20) | (nextval('{{schema}}.delivery_id_seq') & 1048575);
-- The window of created_at a row of this id has: its second, or for a row moved here, any time up to the migration.
CREATE FUNCTION {{schema}}.delivery_from(id bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN id < (1::bigint << 50) THEN '-infinity'::timestamptz ELSE to_timestamp(id >> 20) END;
DO $$
BEGIN
  EXECUTE format($f$CREATE FUNCTION {{schema}}.delivery_until(id bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN id < (1::bigint << 50) THEN %L::timestamptz ELSE to_timestamp((id >> 20) + 1) END$f$,
    greatest(now(), (SELECT max(created_at) FROM {{schema}}.deliveries_unpartitioned)) + interval '1 second');
END $$;

CREATE TABLE {{schema}}.deliveries (
  id bigint NOT NULL,
  message_id text NOT NULL,
  endpoint_id text NOT NULL,
  attempt integer NOT NULL,
  status text NOT NULL CHECK (status IN ('started', 'success', 'failed')),
  http_status integer,
  duration_ms integer NOT NULL,
  error_class text,
  error text,
  response_head text,
  payload_sha256 text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  job_id text,
  resolved boolean NOT NULL DEFAULT false,
  request_headers jsonb,
  response_headers jsonb,
  job_stalls integer,
  message_created_at timestamptz,
  message_tenant text,
  message_type text,
  erased_at timestamptz,
  CONSTRAINT deliveries_pkey PRIMARY KEY (id, created_at),
  CONSTRAINT deliveries_id_time CHECK (created_at >= {{schema}}.delivery_from(id) AND created_at < {{schema}}.delivery_until(id))
) PARTITION BY RANGE (created_at);
CREATE FUNCTION {{schema}}.delivery_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id IS NULL THEN NEW.id := {{schema}}.delivery_id(NEW.created_at); END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER deliveries_id BEFORE INSERT ON {{schema}}.deliveries FOR EACH ROW EXECUTE FUNCTION {{schema}}.delivery_stamp();

-- The indexes of 0001 to 0020, each on every day. The two over the unresolved attempts also hold the message's
-- creation time: a pair's other attempts are read in the days since then only.
CREATE INDEX deliveries_endpoint ON {{schema}}.deliveries (endpoint_id, id DESC);
CREATE INDEX deliveries_status ON {{schema}}.deliveries (status, id DESC);
CREATE INDEX deliveries_message ON {{schema}}.deliveries (message_id, endpoint_id);
CREATE INDEX deliveries_created ON {{schema}}.deliveries (created_at);
CREATE INDEX deliveries_job_unsettled ON {{schema}}.deliveries (job_id) WHERE status = 'started' OR error_class = 'stalled';
CREATE INDEX deliveries_unresolved ON {{schema}}.deliveries (id) INCLUDE (message_id, endpoint_id, message_created_at) WHERE status <> 'success' AND NOT resolved;
CREATE INDEX deliveries_endpoint_unresolved ON {{schema}}.deliveries (endpoint_id, id) INCLUDE (message_id, created_at, message_created_at) WHERE status <> 'success' AND NOT resolved;
CREATE INDEX deliveries_endpoint_created ON {{schema}}.deliveries (endpoint_id, created_at) INCLUDE (status, duration_ms);
CREATE INDEX deliveries_undelivered_created ON {{schema}}.deliveries (message_created_at, message_id) WHERE status = 'failed' AND NOT resolved;
CREATE INDEX deliveries_undelivered_tenant ON {{schema}}.deliveries (message_tenant, message_created_at, message_id) WHERE status = 'failed' AND NOT resolved;
CREATE INDEX deliveries_undelivered_type ON {{schema}}.deliveries (message_type, message_created_at, message_id) WHERE status = 'failed' AND NOT resolved;

CREATE TABLE {{schema}}.deliveries_default PARTITION OF {{schema}}.deliveries DEFAULT;
-- A day for every day the old rows have, and today and the two after (UTC); the retention pass keeps days ahead.
DO $$
DECLARE
  day date;
BEGIN
  FOR day IN SELECT DISTINCT (created_at AT TIME ZONE 'UTC')::date FROM {{schema}}.deliveries_unpartitioned
    UNION SELECT (now() AT TIME ZONE 'UTC')::date + n FROM generate_series(0, 2) AS n
  LOOP
    EXECUTE format('CREATE TABLE {{schema}}.%I PARTITION OF {{schema}}.deliveries FOR VALUES FROM (%L) TO (%L)',
      'deliveries_' || to_char(day, 'YYYYMMDD'), day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
  END LOOP;
END $$;

INSERT INTO {{schema}}.deliveries (id, message_id, endpoint_id, attempt, status, http_status, duration_ms, error_class, error, response_head,
    payload_sha256, created_at, job_id, resolved, request_headers, response_headers, job_stalls, message_created_at, message_tenant, message_type, erased_at)
  SELECT id, message_id, endpoint_id, attempt, status, http_status, duration_ms, error_class, error, response_head,
    payload_sha256, created_at, job_id, resolved, request_headers, response_headers, job_stalls, message_created_at, message_tenant, message_type, erased_at
  FROM {{schema}}.deliveries_unpartitioned;
DROP TABLE {{schema}}.deliveries_unpartitioned;

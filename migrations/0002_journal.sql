-- The event journal: every accepted inbound event as a row, the effects its handlers applied
-- once, each attempt's outcome, and the bulk replays run over it. Effects, attempts and the previous delivery go
-- with their event.
CREATE TABLE {{schema}}.webhook_events (
  id text PRIMARY KEY,
  source text NOT NULL,
  provider text,
  event_type text,
  dedupe_key text NOT NULL,
  payload bytea NOT NULL,
  payload_json jsonb,
  content_type text,
  headers jsonb NOT NULL DEFAULT '{}'::jsonb,
  signature text,
  request_id text,
  received_at timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'received'
    CHECK (status IN ('received', 'processing', 'done', 'failed', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  error_class text,
  processed_at timestamptz,
  job_id text,
  retry_schedule integer[] NOT NULL DEFAULT '{}',
  replay_generation integer NOT NULL DEFAULT 0,
  deliveries integer NOT NULL DEFAULT 1,
  previous_delivery jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_status_received_at ON {{schema}}.webhook_events (status, received_at);
CREATE INDEX webhook_events_provider_event_type ON {{schema}}.webhook_events (provider, event_type);
CREATE INDEX webhook_events_received_at ON {{schema}}.webhook_events (received_at, id);

CREATE TABLE {{schema}}.webhook_effects (
  key text PRIMARY KEY,
  event_id text NOT NULL REFERENCES {{schema}}.webhook_events (id) ON DELETE CASCADE,
  action text NOT NULL,
  result jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_effects_event_id ON {{schema}}.webhook_effects (event_id);

-- One row per attempt a worker finished (the event's row keeps only the count and the last error); written in the
-- same statement as the event's outcome.
CREATE TABLE {{schema}}.webhook_event_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id text NOT NULL REFERENCES {{schema}}.webhook_events (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz,
  finished_at timestamptz NOT NULL DEFAULT now(),
  status text NOT NULL CHECK (status IN ('done', 'failed')),
  error_class text,
  error text,
  job_id text
);
CREATE INDEX webhook_event_attempts_event_id_attempt ON {{schema}}.webhook_event_attempts (event_id, attempt);

CREATE TABLE {{schema}}.replay_runs (
  id text PRIMARY KEY,
  filter jsonb NOT NULL,
  rate_per_second integer,
  matched integer NOT NULL DEFAULT 0,
  replayed integer NOT NULL DEFAULT 0,
  state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'cancelled')),
  cursor_received_at timestamptz,
  cursor_id text,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

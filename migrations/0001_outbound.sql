-- Outgoing webhooks: endpoints and their secrets, the outbox, the delivery log.

CREATE TABLE {{schema}}.endpoints (
  id text PRIMARY KEY,
  url text NOT NULL,
  tenant text,
  -- Empty means every event type.
  event_types text[] NOT NULL DEFAULT '{}',
  description text NOT NULL DEFAULT '',
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  scheme text NOT NULL DEFAULT 'standard-webhooks' CHECK (scheme IN ('standard-webhooks', 'stripe')),
  -- Deliveries per second; NULL is no limit.
  rate_limit integer CHECK (rate_limit IS NULL OR rate_limit > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_delivery_at timestamptz,
  last_delivery_status text CHECK (last_delivery_status IN ('success', 'failed')),
  -- Set by the first failure after a success (or ever), cleared by a success: the auto-disable clock.
  failing_since timestamptz
);
-- Fan-out reads the enabled endpoints of one tenant.
CREATE INDEX endpoints_tenant_enabled ON {{schema}}.endpoints (tenant) WHERE enabled;

CREATE TABLE {{schema}}.endpoint_secrets (
  endpoint_id text NOT NULL REFERENCES {{schema}}.endpoints (id) ON DELETE CASCADE,
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- NULL is the current secret; a rotated one signs beside it until then.
  expires_at timestamptz,
  PRIMARY KEY (endpoint_id, secret)
);

CREATE TABLE {{schema}}.outbox (
  id text PRIMARY KEY,
  type text NOT NULL,
  -- The name receivers see; NULL when the event map gives none (never delivered).
  public_type text,
  tenant text,
  -- The data as JSON text, so every delivery sends the same bytes.
  data text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'dispatched', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  -- A dispatcher's claim: who holds the row and until when; an expired lease is claimed again.
  lease_owner text,
  lease_until timestamptz,
  dispatched_at timestamptz
);
-- The claim scans only what is pending, in due order.
CREATE INDEX outbox_due ON {{schema}}.outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_failed ON {{schema}}.outbox (created_at) WHERE status = 'failed';

CREATE TABLE {{schema}}.deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- No foreign keys: the log outlives a deleted endpoint and a pruned outbox row.
  message_id text NOT NULL,
  endpoint_id text NOT NULL,
  attempt integer NOT NULL,
  status text NOT NULL CHECK (status IN ('success', 'failed')),
  http_status integer,
  duration_ms integer NOT NULL,
  error_class text,
  error text,
  response_head text,
  payload_sha256 text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- GET /admin/deliveries?endpoint=, newest first.
CREATE INDEX deliveries_endpoint ON {{schema}}.deliveries (endpoint_id, id DESC);
-- GET /admin/deliveries?status=failed and the recover scan.
CREATE INDEX deliveries_status ON {{schema}}.deliveries (status, id DESC);
-- A message's deliveries, and the undelivered view (grouped by message and endpoint).
CREATE INDEX deliveries_message ON {{schema}}.deliveries (message_id, endpoint_id);
-- GET /admin/deliveries?since=.
CREATE INDEX deliveries_created ON {{schema}}.deliveries (created_at);

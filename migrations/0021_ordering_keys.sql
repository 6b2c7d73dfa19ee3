-- Order per key: a message published with an ordering key reaches each endpoint after the key's earlier messages
-- there have succeeded or been given up (docs/outgoing-webhooks.md, "Order").
-- The key, and the message's place in its key's publish order: a publish of a key takes a lock on the (tenant, key)
-- until its transaction ends, then the next number, so numbers follow the commits of one key.
ALTER TABLE {{schema}}.outbox ADD COLUMN ordering_key text;
ALTER TABLE {{schema}}.outbox ADD COLUMN ordering_seq bigint;
CREATE SEQUENCE {{schema}}.outbox_ordering_seq;
-- The claim takes a keyed message only once no earlier message of its key is pending.
CREATE INDEX outbox_ordering_pending ON {{schema}}.outbox (ordering_key, ordering_seq) WHERE status = 'pending' AND ordering_key IS NOT NULL;
-- A keyed message's delivery to one endpoint, from its fan-out until its outcome is final: per endpoint and key, the
-- lowest number is the head (ready: its job is to be added; queued: added), the others wait for it. The row goes
-- with the head's final outcome, which makes the next one ready, in one transaction.
CREATE TABLE {{schema}}.ordered_deliveries (
  endpoint_id text NOT NULL REFERENCES {{schema}}.endpoints (id) ON DELETE CASCADE,
  ordering_key text NOT NULL,
  seq bigint NOT NULL,
  message_id text NOT NULL,
  state text NOT NULL CHECK (state IN ('waiting', 'ready', 'queued')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, ordering_key, seq)
);
-- The dispatcher adds the jobs of the heads made ready.
CREATE INDEX ordered_deliveries_ready ON {{schema}}.ordered_deliveries (seq) WHERE state = 'ready';
-- A job's outcome finds its row; retention keeps a message that still waits.
CREATE INDEX ordered_deliveries_message ON {{schema}}.ordered_deliveries (message_id, endpoint_id);

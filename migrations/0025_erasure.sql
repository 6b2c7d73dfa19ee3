-- Erasure by data subject and removal of a tenant: the subject a message or an inbound event was tagged with, the
-- delivery log's mark of an attempt whose bodies were erased, and the audit of each erasure (docs/outgoing-webhooks.md, "Erasure").
ALTER TABLE {{schema}}.outbox ADD COLUMN subject text;
-- An erasure finds a subject's messages by it; most messages have none, so they are not in it.
CREATE INDEX outbox_subject ON {{schema}}.outbox (subject, id) WHERE subject IS NOT NULL;
-- Removing a tenant walks its messages, whatever their status, in batches.
CREATE INDEX outbox_tenant ON {{schema}}.outbox (tenant, id) WHERE tenant IS NOT NULL;
-- When the attempt's bodies (the answer's head, the error, the request's and answer's headers) were erased; the row
-- stays for the counts and the endpoint's history.
ALTER TABLE {{schema}}.deliveries ADD COLUMN erased_at timestamptz;
ALTER TABLE {{schema}}.webhook_events ADD COLUMN subject text;
CREATE INDEX webhook_events_subject ON {{schema}}.webhook_events (subject) WHERE subject IS NOT NULL;
-- One row per erasure: what (a subject, as its SHA-256, or a tenant), who asked, when, and what it removed.
CREATE TABLE {{schema}}.erasure_audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  action text NOT NULL CHECK (action IN ('subject', 'tenant')),
  target text NOT NULL,
  actor text NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  counts jsonb NOT NULL
);

-- Re-send by filter (`POST /admin/messages/resend`) walks the messages whose deliveries failed and never succeeded
-- in the order it answers them, so a page costs what it returns: each attempt's row carries its message's creation
-- time, tenant and type (written with the row), and three partial indexes over the unresolved failures hold them in
-- (created_at, id) order, by themselves and per tenant and per type. A filter that matches nothing reads nothing.
-- On a large log, run first outside a transaction: the ALTER (instant), then each CREATE INDEX as
-- CREATE INDEX CONCURRENTLY IF NOT EXISTS; the migration then only fills the columns of the unresolved attempts.
ALTER TABLE {{schema}}.deliveries ADD COLUMN IF NOT EXISTS message_created_at timestamptz,
  ADD COLUMN IF NOT EXISTS message_tenant text, ADD COLUMN IF NOT EXISTS message_type text;
UPDATE {{schema}}.deliveries d SET message_created_at = o.created_at, message_tenant = o.tenant, message_type = o.type
  FROM {{schema}}.outbox o
  WHERE o.id = d.message_id AND d.status <> 'success' AND NOT d.resolved AND d.message_created_at IS NULL;
CREATE INDEX IF NOT EXISTS deliveries_undelivered_created ON {{schema}}.deliveries (message_created_at, message_id)
  WHERE status = 'failed' AND NOT resolved;
CREATE INDEX IF NOT EXISTS deliveries_undelivered_tenant ON {{schema}}.deliveries (message_tenant, message_created_at, message_id)
  WHERE status = 'failed' AND NOT resolved;
CREATE INDEX IF NOT EXISTS deliveries_undelivered_type ON {{schema}}.deliveries (message_type, message_created_at, message_id)
  WHERE status = 'failed' AND NOT resolved;

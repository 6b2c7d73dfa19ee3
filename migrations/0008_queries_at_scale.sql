-- Every admin list, stat and retention pass reads an index, so it costs the same at a million rows as at ten
-- thousand. Each CREATE INDEX says IF NOT EXISTS: on a large table build it first with CREATE INDEX CONCURRENTLY
-- (this migration runs in one transaction, where a build blocks writes to its table); it then adds nothing.

-- A failed or started attempt is `resolved` once its message reached the same endpoint; the undelivered view and
-- recover read the unresolved ones only, not the whole log. The indexes carry the pair's ids, so a walk reads
-- the index alone (the table only for the page it shows), whichever of the two the planner takes.
ALTER TABLE {{schema}}.deliveries ADD COLUMN IF NOT EXISTS resolved boolean NOT NULL DEFAULT false;
UPDATE {{schema}}.deliveries d SET resolved = true
  WHERE d.status <> 'success' AND NOT d.resolved AND EXISTS (
    SELECT 1 FROM {{schema}}.deliveries s WHERE s.message_id = d.message_id AND s.endpoint_id = d.endpoint_id AND s.status = 'success');
CREATE INDEX IF NOT EXISTS deliveries_unresolved ON {{schema}}.deliveries (id) INCLUDE (message_id, endpoint_id) WHERE status <> 'success' AND NOT resolved;
CREATE INDEX IF NOT EXISTS deliveries_endpoint_unresolved ON {{schema}}.deliveries (endpoint_id, id) INCLUDE (message_id, created_at) WHERE status <> 'success' AND NOT resolved;
-- The outbox's stats: the oldest pending message, read from an index instead of the table.
CREATE INDEX IF NOT EXISTS outbox_pending_created ON {{schema}}.outbox (created_at) WHERE status = 'pending';
-- GET /admin/endpoints?tenant=, in id order.
CREATE INDEX IF NOT EXISTS endpoints_tenant_id ON {{schema}}.endpoints (tenant, id);

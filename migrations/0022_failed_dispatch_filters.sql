-- Re-send by filter's other half: the messages whose dispatch failed, walked by tenant or by type in the pages'
-- (created_at, id) order, so a filter that names a tenant or a type reads only its own failed dispatches (outbox_failed
-- is by time only, and read every failed dispatch for such a filter). On a large outbox, build them CONCURRENTLY first.
CREATE INDEX IF NOT EXISTS outbox_failed_tenant ON {{schema}}.outbox (tenant, created_at, id) WHERE status = 'failed';
CREATE INDEX IF NOT EXISTS outbox_failed_type ON {{schema}}.outbox (type, created_at, id) WHERE status = 'failed';

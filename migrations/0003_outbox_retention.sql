-- Outbox retention: the worker deletes dispatched and failed messages by age, oldest first, without
-- reading the pending ones. IF NOT EXISTS: an operator with a large outbox may build it first without blocking
-- writes (CREATE INDEX CONCURRENTLY IF NOT EXISTS … outside a transaction); this migration then adds nothing.
CREATE INDEX IF NOT EXISTS outbox_finished ON {{schema}}.outbox (created_at) WHERE status <> 'pending';

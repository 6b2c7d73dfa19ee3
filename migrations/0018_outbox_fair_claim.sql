-- The outbox's claim is fair between tenants, so one tenant's backlog cannot delay another's messages: it walks the tenants with pending messages (a skip scan
-- of this index) and takes each one's oldest due messages. coalesce: the operator's messages (no tenant) are one
-- tenant of their own. outbox_due stays for a worker of the version before during a rolling upgrade.
CREATE INDEX IF NOT EXISTS outbox_tenant_due ON {{schema}}.outbox ((coalesce(tenant, '')), next_attempt_at) WHERE status = 'pending';

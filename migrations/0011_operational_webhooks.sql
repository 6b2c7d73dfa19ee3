-- Operational webhooks: Anvil's own events (an endpoint disabled, failing or recovered, a message's attempts
-- exhausted, an inbound event dead-lettered), written to the outbox and delivered like any message.
-- An operator's endpoint for them (/admin/operational-endpoints): it receives only operational events, of every tenant.
ALTER TABLE {{schema}}.endpoints ADD COLUMN operational boolean NOT NULL DEFAULT false;
-- When the endpoint's open circuit was reported (endpoint.failing); its next success clears it (endpoint.recovered).
-- The row lock decides the transition, so several workers report each opening once.
ALTER TABLE {{schema}}.endpoints ADD COLUMN circuit_opened_at timestamptz;
-- A message of Anvil's own: fanned out to the operational endpoints and to the tenant's endpoints subscribed by name.
ALTER TABLE {{schema}}.outbox ADD COLUMN operational boolean NOT NULL DEFAULT false;
-- The operational endpoints, read for each operational message (few rows, and most endpoints are not).
CREATE INDEX endpoints_operational ON {{schema}}.endpoints (id) WHERE operational;

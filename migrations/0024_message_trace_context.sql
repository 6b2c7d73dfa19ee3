-- The W3C trace context a message was published in (its publish span's, when Anvil traces), which each of its
-- deliveries carries to the receiver as traceparent and tracestate; null for a message published outside a trace.
ALTER TABLE {{schema}}.outbox ADD COLUMN traceparent text, ADD COLUMN tracestate text;

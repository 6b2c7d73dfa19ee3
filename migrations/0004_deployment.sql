-- The deployment this database is: one id, made here. Its workers claim the Redis queues they consume with it
-- (src/queue/deployment.ts), so two deployments on one Redis never take each other's jobs.
CREATE TABLE {{schema}}.deployment (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO {{schema}}.deployment (id) VALUES ('dep_' || replace(gen_random_uuid()::text, '-', ''));

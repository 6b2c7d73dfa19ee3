-- The event-type catalog: each type's description and the JSON Schema its data must fit; publish checks it.
CREATE TABLE {{schema}}.event_types (
  name text PRIMARY KEY,
  description text NOT NULL DEFAULT '',
  schema jsonb NOT NULL,
  deprecated boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

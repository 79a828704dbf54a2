-- The outbox table outbox-publisher reads by default (SPEC.md).
-- Applications INSERT one row per event in the same transaction as their
-- business change; the publisher turns each INSERT into a Kafka record.
CREATE TABLE IF NOT EXISTS outbox (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  aggregate_type text        NOT NULL,  -- routes to a topic
  aggregate_id   text        NOT NULL,  -- Kafka key: per-aggregate order
  event_type     text        NOT NULL,
  payload        jsonb       NOT NULL,
  headers        jsonb,
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- The outbox table outbox-publisher reads by default (docs/design.md).
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

-- An outbox without a table (outbox-publisher --message-prefix outbox): the event
-- goes through the WAL only, as a transactional logical decoding message that
-- commits or rolls back with the caller's transaction. Returns the event's id.
-- The prefix is the setting outbox.message_prefix when set (SET outbox.message_prefix
-- = '...' per session, or ALTER DATABASE ... SET), else 'outbox'; it must match the
-- publisher's --message-prefix. Needs PostgreSQL 14 or later to be streamed.
CREATE OR REPLACE FUNCTION outbox_emit(aggregate_type text, aggregate_id text,
                                       event_type text, payload jsonb,
                                       headers jsonb DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  event_id uuid := gen_random_uuid();
BEGIN
  IF aggregate_type IS NULL OR aggregate_id IS NULL OR event_type IS NULL
     OR payload IS NULL THEN
    RAISE EXCEPTION 'outbox_emit: aggregate_type, aggregate_id, event_type and payload '
                    'must not be NULL';
  END IF;
  IF headers IS NOT NULL AND jsonb_typeof(headers) <> 'object' THEN
    RAISE EXCEPTION 'outbox_emit: headers must be a JSON object';
  END IF;
  PERFORM pg_logical_emit_message(
    true,
    coalesce(nullif(current_setting('outbox.message_prefix', true), ''), 'outbox'),
    jsonb_build_object('id', event_id, 'aggregate_type', aggregate_type,
                       'aggregate_id', aggregate_id, 'event_type', event_type,
                       'payload', payload, 'headers', headers)::text);
  RETURN event_id;
END
$$;

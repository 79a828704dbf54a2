#!/usr/bin/python3
"""An idempotent outbox consumer in Python (docs/consumer.md, "What the consumer must do").

confluent-kafka, protobuf and psycopg2, pinned in requirements.txt
(python3 -m venv venv && venv/bin/pip install -r requirements.txt; Debian's
python3-confluent-kafka, python3-protobuf and python3-psycopg2 work too). For each record it
decodes the outbox.v1.Envelope, then, in one PostgreSQL transaction, claims the
envelope's id in processed_messages and applies the effect (one more event counted
for the aggregate in example_effects). A redelivered id claims nothing, so its
effect is skipped. Only after the commit does the record's offset go to Kafka.

The envelope's Python code is generated from the repository's proto files:
    protoc --python_out=gen -I proto proto/outbox/v1/envelope.proto
and found through OUTBOX_PROTO_PY (default: ./gen).

Settings (environment): KAFKA_BOOTSTRAP, TOPICS (comma-separated), GROUP,
DATABASE_URL (a libpq conninfo or URL), EXIT_AFTER (stop after this many records;
0 = run until interrupted). It prints one line per record: "applied ID TYPE KEY",
"duplicate ID", or "skipped TOPIC/PARTITION@OFFSET" for a record that is no
envelope (a real service sends those to a dead-letter topic).
"""
import os
import sys

import psycopg2
from confluent_kafka import Consumer, KafkaException

sys.path.insert(0, os.environ.get("OUTBOX_PROTO_PY", "gen"))
from outbox.v1 import envelope_pb2  # noqa: E402  (generated, found at run time)

ENVELOPE = b"application/x-protobuf; messageType=outbox.v1.Envelope"

SCHEMA = """
CREATE TABLE IF NOT EXISTS processed_messages (
  id text PRIMARY KEY, topic text NOT NULL, kafka_partition integer NOT NULL,
  kafka_offset bigint NOT NULL, processed_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS example_effects (
  aggregate_id text PRIMARY KEY, events integer NOT NULL);
"""
CLAIM = """
INSERT INTO processed_messages (id, topic, kafka_partition, kafka_offset)
VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO NOTHING
"""
EFFECT = """
INSERT INTO example_effects (aggregate_id, events) VALUES (%s, 1)
ON CONFLICT (aggregate_id) DO UPDATE SET events = example_effects.events + 1
"""


def first_header(message, name):
    for key, value in message.headers() or []:
        if key == name:
            return value
    return None


def apply_once(db, message, envelope):
    """Claim and effect in one transaction; True when this delivery applied it."""
    with db:  # Commits on success, rolls back on an exception.
        with db.cursor() as cur:
            cur.execute(CLAIM, (envelope.id, message.topic(), message.partition(),
                                message.offset()))
            if cur.rowcount == 0:
                return False  # Applied before: a redelivery.
            cur.execute(EFFECT, (envelope.aggregate_id,))
            return True


def main():
    db = psycopg2.connect(os.environ["DATABASE_URL"])
    with db, db.cursor() as cur:
        cur.execute(SCHEMA)
    consumer = Consumer({
        "bootstrap.servers": os.environ["KAFKA_BOOTSTRAP"],
        "group.id": os.environ.get("GROUP", "python-example"),
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
    })
    consumer.subscribe(os.environ["TOPICS"].split(","))
    exit_after = int(os.environ.get("EXIT_AFTER", "0"))
    handled = 0
    try:
        while exit_after == 0 or handled < exit_after:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                raise KafkaException(message.error())
            handled += 1
            if first_header(message, "content_type") != ENVELOPE:
                print(f"skipped {message.topic()}/{message.partition()}@{message.offset()}",
                      flush=True)
            else:
                envelope = envelope_pb2.Envelope()
                envelope.ParseFromString(message.value())
                if apply_once(db, message, envelope):
                    print(f"applied {envelope.id} {envelope.event_type} "
                          f"{envelope.aggregate_id}", flush=True)
                else:
                    print(f"duplicate {envelope.id}", flush=True)
            # Only now, after the commit: the offset of the next record.
            consumer.commit(message=message, asynchronous=False)
    finally:
        consumer.close()
        db.close()


if __name__ == "__main__":
    main()

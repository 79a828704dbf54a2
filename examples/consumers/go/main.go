// An idempotent outbox consumer in Go (docs/consumer.md, "What the consumer must
// do"), with franz-go, pgx and google.golang.org/protobuf.
//
// For each record it decodes the outbox.v1.Envelope, then, in one PostgreSQL
// transaction, claims the envelope's id in processed_messages and applies the
// effect (one more event counted for the aggregate in example_effects). A
// redelivered id claims nothing, so its effect is skipped. Only after the commit
// does the record's offset go to Kafka.
//
// Settings (environment): KAFKA_BOOTSTRAP, TOPICS (comma-separated), GROUP,
// DATABASE_URL (a libpq conninfo or URL), EXIT_AFTER (stop after this many
// records; 0 = run until interrupted). It prints one line per record: "applied ID
// TYPE KEY", "duplicate ID", or "skipped TOPIC/PARTITION@OFFSET" for a record that
// is no envelope (a real service sends those to a dead-letter topic).
//
// run.sh generates the envelope's code and builds it.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	outboxv1 "outboxpublisher/proto/outbox/v1"
)

const envelopeType = "application/x-protobuf; messageType=outbox.v1.Envelope"

const schema = `
CREATE TABLE IF NOT EXISTS processed_messages (
  id text PRIMARY KEY, topic text NOT NULL, kafka_partition integer NOT NULL,
  kafka_offset bigint NOT NULL, processed_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS example_effects (
  aggregate_id text PRIMARY KEY, events integer NOT NULL);`

func firstHeader(r *kgo.Record, name string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == name {
			return string(h.Value), true
		}
	}
	return "", false
}

// applyOnce claims the id and applies the effect in one transaction; true when
// this delivery applied it.
func applyOnce(ctx context.Context, db *pgx.Conn, r *kgo.Record, e *outboxv1.Envelope) (bool, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx) // A no-op after the commit.
	claim, err := tx.Exec(ctx,
		`INSERT INTO processed_messages (id, topic, kafka_partition, kafka_offset)
		 VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
		e.GetId(), r.Topic, r.Partition, r.Offset)
	if err != nil {
		return false, err
	}
	if claim.RowsAffected() == 0 {
		return false, tx.Commit(ctx) // Applied before: a redelivery.
	}
	if _, err := tx.Exec(ctx,
		`INSERT INTO example_effects (aggregate_id, events) VALUES ($1, 1)
		 ON CONFLICT (aggregate_id) DO UPDATE SET events = example_effects.events + 1`,
		e.GetAggregateId()); err != nil {
		return false, err
	}
	return true, tx.Commit(ctx)
}

func main() {
	ctx := context.Background()
	db, err := pgx.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, schema); err != nil {
		log.Fatalf("create the tables: %v", err)
	}
	client, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(os.Getenv("KAFKA_BOOTSTRAP"), ",")...),
		kgo.ConsumerGroup(os.Getenv("GROUP")),
		kgo.ConsumeTopics(strings.Split(os.Getenv("TOPICS"), ",")...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
	)
	if err != nil {
		log.Fatalf("create the Kafka client: %v", err)
	}
	defer client.Close()
	exitAfter, _ := strconv.Atoi(os.Getenv("EXIT_AFTER"))
	handled := 0
	for exitAfter == 0 || handled < exitAfter {
		fetches := client.PollFetches(ctx)
		if errs := fetches.Errors(); len(errs) > 0 {
			log.Fatalf("poll: %v", errs)
		}
		for _, r := range fetches.Records() {
			handled++
			if t, _ := firstHeader(r, "content_type"); t != envelopeType {
				fmt.Printf("skipped %s/%d@%d\n", r.Topic, r.Partition, r.Offset)
			} else {
				e := &outboxv1.Envelope{}
				if err := proto.Unmarshal(r.Value, e); err != nil {
					log.Fatalf("decode the envelope at %s/%d@%d: %v", r.Topic, r.Partition, r.Offset, err)
				}
				applied, err := applyOnce(ctx, db, r, e)
				if err != nil {
					log.Fatalf("apply %s: %v", e.GetId(), err)
				}
				if applied {
					fmt.Printf("applied %s %s %s\n", e.GetId(), e.GetEventType(), e.GetAggregateId())
				} else {
					fmt.Printf("duplicate %s\n", e.GetId())
				}
			}
			// Only now, after the commit: the offset of the next record.
			if err := client.CommitRecords(ctx, r); err != nil {
				log.Fatalf("commit the offset: %v", err)
			}
		}
	}
}

// An idempotent outbox consumer in Java (docs/consumer.md, "What the consumer must
// do"), with kafka-clients, protobuf-java and the PostgreSQL JDBC driver.
//
// For each record it decodes the outbox.v1.Envelope, then, in one PostgreSQL
// transaction, claims the envelope's id in processed_messages and applies the
// effect (one more event counted for the aggregate in example_effects). A
// redelivered id claims nothing, so its effect is skipped. Only after the commit
// does the record's offset go to Kafka.
//
// Settings (environment): KAFKA_BOOTSTRAP, TOPICS (comma-separated), GROUP,
// DATABASE_URL (a libpq conninfo: host=... port=... user=... dbname=...),
// EXIT_AFTER (stop after this many records; 0 = run until interrupted). It prints
// one line per record: "applied ID TYPE KEY", "duplicate ID", or "skipped
// TOPIC/PARTITION@OFFSET" for a record that is no envelope (a real service sends
// those to a dead-letter topic).
//
// run.sh generates the envelope's classes and builds it.
package example;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import outbox.v1.Envelope;

public final class OutboxConsumer {
  private static final String ENVELOPE_TYPE =
      "application/x-protobuf; messageType=outbox.v1.Envelope";
  private static final String SCHEMA = "CREATE TABLE IF NOT EXISTS processed_messages ("
      + " id text PRIMARY KEY, topic text NOT NULL, kafka_partition integer NOT NULL,"
      + " kafka_offset bigint NOT NULL, processed_at timestamptz NOT NULL DEFAULT now());"
      + " CREATE TABLE IF NOT EXISTS example_effects ("
      + " aggregate_id text PRIMARY KEY, events integer NOT NULL)";

  private OutboxConsumer() {}

  // The first header of that name (lastHeader would let a later one win).
  private static String firstHeader(ConsumerRecord<byte[], byte[]> r, String name) {
    for (Header h : r.headers()) {
      if (h.key().equals(name))
        return new String(h.value(), StandardCharsets.UTF_8);
    }
    return null;
  }

  // Claim and effect in one transaction; true when this delivery applied it.
  private static boolean applyOnce(
      Connection db, ConsumerRecord<byte[], byte[]> r, Envelope e) throws SQLException {
    try {
      boolean claimed;
      try (PreparedStatement claim = db.prepareStatement(
               "INSERT INTO processed_messages (id, topic, kafka_partition, kafka_offset)"
               + " VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING")) {
        claim.setString(1, e.getId());
        claim.setString(2, r.topic());
        claim.setInt(3, r.partition());
        claim.setLong(4, r.offset());
        claimed = claim.executeUpdate() == 1;
      }
      if (claimed) {
        try (
            PreparedStatement effect = db.prepareStatement(
                "INSERT INTO example_effects (aggregate_id, events) VALUES (?, 1)"
                + " ON CONFLICT (aggregate_id) DO UPDATE SET events = example_effects.events + 1")) {
          effect.setString(1, e.getAggregateId());
          effect.executeUpdate();
        }
      }
      db.commit(); // The claim and the effect together.
      return claimed;
    } catch (SQLException ex) {
      db.rollback();
      throw ex;
    }
  }

  // "host=h port=p user=u dbname=d" as a JDBC URL.
  private static String jdbcUrl(String conninfo) {
    Map<String, String> kv = new HashMap<>();
    for (String part : conninfo.trim().split("\\s+")) {
      String[] pair = part.split("=", 2);
      kv.put(pair[0], pair[1]);
    }
    return "jdbc:postgresql://" + kv.getOrDefault("host", "localhost") + ":"
        + kv.getOrDefault("port", "5432") + "/" + kv.get("dbname")
        + "?user=" + kv.getOrDefault("user", "postgres");
  }

  public static void main(String[] args) throws Exception {
    try (Connection db =
             DriverManager.getConnection(jdbcUrl(System.getenv("DATABASE_URL")))) {
      try (Statement s = db.createStatement()) {
        s.execute(SCHEMA);
      }
      db.setAutoCommit(false);
      Properties props = new Properties();
      props.put("bootstrap.servers", System.getenv("KAFKA_BOOTSTRAP"));
      props.put("group.id", System.getenv("GROUP"));
      props.put("enable.auto.commit", "false");
      props.put("isolation.level", "read_committed");
      props.put("auto.offset.reset", "earliest");
      int exitAfter = Integer.parseInt(System.getenv().getOrDefault("EXIT_AFTER", "0"));
      int handled = 0;
      try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
               props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
        consumer.subscribe(Arrays.asList(System.getenv("TOPICS").split(",")));
        while (exitAfter == 0 || handled < exitAfter) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
            handled++;
            if (!ENVELOPE_TYPE.equals(firstHeader(r, "content_type"))) {
              System.out.printf(
                  "skipped %s/%d@%d%n", r.topic(), r.partition(), r.offset());
            } else {
              Envelope e = Envelope.parseFrom(r.value());
              if (applyOnce(db, r, e)) {
                System.out.printf("applied %s %s %s%n", e.getId(), e.getEventType(),
                    e.getAggregateId());
              } else {
                System.out.printf("duplicate %s%n", e.getId());
              }
            }
            System.out.flush();
            // Only now, after the commit: the offset of the next record.
            consumer.commitSync(Map.of(new TopicPartition(r.topic(), r.partition()),
                new OffsetAndMetadata(r.offset() + 1)));
          }
        }
      }
    }
  }
}

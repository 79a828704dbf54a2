// End-to-end tests of the outbox-publisher binary against a throwaway PostgreSQL
// and mock-kafka, with a consumer reading concurrently and decoding envelopes.
#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cdc/lsn.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/v1/envelope.pb.h"
#include "tests/publisher/publisher_fixture.h"
#include "tests/test_util.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

TEST_F(PublisherTest, ExactlyTheCommittedInsertsArriveByteForByte) {
  publisher_ = StartPublisher();
  auto consumer = StartConsumer();
  ASSERT_TRUE(sql_->Exec(R"sql(
    INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers, created_at)
    VALUES ('00000000-0000-0000-0000-000000000001', 'order', 'o-1', 'OrderCreated',
            '{"total": 10, "name": "Zoë ✓ 日本"}', '{"trace": "t-1", "n": 2}',
            '2026-01-02 03:04:05.123456+00'),
           ('00000000-0000-0000-0000-000000000002', 'user', 'u-1', 'UserAdded', '[]', NULL,
            '2026-01-02 03:04:05+00');
    INSERT INTO outbox_bin VALUES (7, 'bin', 'b-1', 'Blob', '\x00ff0a7f');
  )sql")
                  .ok());
  ASSERT_TRUE(
      sql_->Exec("BEGIN; INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                 "payload) VALUES ('order', 'o-x', 'RolledBack', '{}'); ROLLBACK")
          .ok());
  ASSERT_TRUE(sql_->Exec(R"sql(
    UPDATE outbox SET event_type = 'Changed' WHERE aggregate_id = 'o-1';
    DELETE FROM outbox WHERE aggregate_id = 'u-1';
    INSERT INTO other (v) VALUES ('not published');
  )sql")
                  .ok());
  ASSERT_TRUE(sql_->Exec("TRUNCATE outbox_bin").ok());
  ASSERT_TRUE(sql_->Exec(R"sql(
    BEGIN;
    INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
    VALUES ('00000000-0000-0000-0000-000000000003', 'order', 'o-1', 'InsertThenDelete', '{}');
    DELETE FROM outbox WHERE id = '00000000-0000-0000-0000-000000000003';
    COMMIT;
  )sql")
                  .ok());
  Lsn end = WalInsert();

  ASSERT_TRUE(WaitFor([&] { return consumer->Count() >= 4; }, absl::Seconds(60)));
  // Let anything that should not exist have time to show up: wait for the slot.
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)))
      << "confirmed " << Confirmed() << " never reached " << end;
  std::vector<ConsumedRecord> records = consumer->Records();
  ASSERT_EQ(records.size(), 4u);

  std::map<std::string, ConsumedRecord> by_id;
  for (const auto& r : records) by_id[Header(r, "id")] = r;
  ASSERT_EQ(by_id.size(), 4u);

  const ConsumedRecord& first = by_id["00000000-0000-0000-0000-000000000001"];
  EXPECT_EQ(first.topic, "outbox.event.order");
  EXPECT_EQ(first.key, "o-1");
  EXPECT_EQ(first.timestamp_ms, 1'767'323'045'123);
  EXPECT_EQ(Header(first, "event_type"), "OrderCreated");
  EXPECT_EQ(Header(first, "content_type"),
            "application/x-protobuf; messageType=outbox.v1.Envelope");
  EXPECT_EQ(Header(first, "trace"), "t-1");
  EXPECT_EQ(Header(first, "n"), "2");
  outbox::v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(first.value));
  EXPECT_EQ(e.id(), "00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(e.aggregate_type(), "order");
  EXPECT_EQ(e.aggregate_id(), "o-1");
  EXPECT_EQ(e.event_type(), "OrderCreated");
  EXPECT_EQ(e.payload(), R"({"name": "Zoë ✓ 日本", "total": 10})");  // jsonb's own text
  EXPECT_EQ(e.content_type(), "application/json");
  EXPECT_EQ(e.headers().at("trace"), "t-1");
  EXPECT_EQ(e.created_at().seconds(), 1'767'323'045);
  EXPECT_EQ(e.created_at().nanos(), 123'456'000);
  EXPECT_EQ(e.source().database(), "postgres");
  EXPECT_EQ(e.source().schema(), "public");
  EXPECT_EQ(e.source().table(), "outbox");
  EXPECT_GT(e.source().commit_lsn(), 0u);
  EXPECT_GT(e.source().lsn(), 0u);
  EXPECT_GT(e.source().xid(), 0u);

  const ConsumedRecord& user = by_id["00000000-0000-0000-0000-000000000002"];
  EXPECT_EQ(user.topic, "outbox.event.user");
  EXPECT_EQ(user.key, "u-1");
  ASSERT_TRUE(e.ParseFromString(user.value));
  EXPECT_EQ(e.payload(), "[]");
  EXPECT_TRUE(e.headers().empty());

  const ConsumedRecord& bin = by_id["7"];
  EXPECT_EQ(bin.topic, "outbox.event.bin");
  ASSERT_TRUE(e.ParseFromString(bin.value));
  EXPECT_EQ(e.payload(), std::string("\x00\xff\x0a\x7f", 4));
  EXPECT_EQ(e.content_type(), "application/octet-stream");
  EXPECT_EQ(e.source().table(), "outbox_bin");

  const ConsumedRecord& kept = by_id["00000000-0000-0000-0000-000000000003"];
  ASSERT_TRUE(e.ParseFromString(kept.value));
  EXPECT_EQ(e.event_type(), "InsertThenDelete");
  // Same key, same partition, commit order.
  EXPECT_EQ(kept.partition, first.partition);
  EXPECT_GT(kept.offset, first.offset);

  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  EXPECT_GE(Confirmed(), end);
}

TEST_F(PublisherTest, BrokerOutageNeverConfirmsUnacknowledgedRowsAndRecovers) {
  publisher_ = StartPublisher({"--max-in-flight", "50"});
  auto consumer = StartConsumer();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(30)));
  ASSERT_EQ(mock_->Command("down all"), "ok");
  Lsn before = WalInsert();
  // 200 rows in 100 transactions: far beyond the in-flight limit.
  ASSERT_TRUE(sql_->Exec(R"sql(
    DO $$ BEGIN
      FOR i IN 1..100 LOOP
        INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
        SELECT 'order', 'o-' || (i % 7), 'E', jsonb_build_object('i', i, 'j', j)
        FROM generate_series(1, 2) j;
        COMMIT;
      END LOOP;
    END $$)sql")
                  .ok());
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor(
      [&] {
        return publisher_->Log().find("reading the WAL paused") != std::string::npos;
      },
      absl::Seconds(60)))
      << "the in-flight limit never paused reading";
  // Hold the outage for a while: the slot must not move past the first transaction.
  absl::Time until = absl::Now() + absl::Seconds(5);
  while (absl::Now() < until) {
    ASSERT_LE(Confirmed(), before) << "confirmed past an unacknowledged row";
    ASSERT_TRUE(publisher_->running()) << publisher_->Log();
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_THAT(publisher_->Log(), HasSubstr("\"in_flight\":50"));
  // The stall and its cause are visible: librdkafka's own lines come through the
  // same JSON logger.
  EXPECT_THAT(publisher_->Log(), HasSubstr("\"component\":\"librdkafka\""));
  EXPECT_THAT(publisher_->Log(), HasSubstr("\"paused\":true"));
  EXPECT_EQ(consumer->Count(), 0u);

  ASSERT_EQ(mock_->Command("up all"), "ok");
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(120)))
      << "the slot did not catch up: " << Confirmed() << " < " << end;
  // A consumer that was connected through "down all" does not resume fetching
  // from the mock cluster (a mock-kafka limit, see the issue notes); read with a
  // new one.
  consumer.reset();
  auto after = StartConsumer();
  ASSERT_TRUE(WaitFor([&] { return after->Count() >= 200; }, absl::Seconds(60)));
  std::set<std::string> ids = DistinctIds(*after, 200);
  EXPECT_EQ(ids.size(), 200u);
  EXPECT_EQ(ids, [&] {
    std::set<std::string> want;
    for (const auto& row : ValueOrDie(sql_->Exec("SELECT id::text FROM outbox"))) {
      want.insert(*row[0]);
    }
    return want;
  }());
}

TEST_F(PublisherTest, StopAndRestartMidStreamLosesNothing) {
  publisher_ = StartPublisher();
  auto consumer = StartConsumer();
  // A writer commits while the publisher is stopped and restarted.
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    auto session = ValueOrDie(cluster_->Connect());
    for (int t = 0; t < 300 && writing; ++t) {
      ASSERT_TRUE(session
                      ->Exec(absl::StrCat("INSERT INTO outbox (aggregate_type, "
                                          "aggregate_id, event_type, payload) SELECT "
                                          "'order', 'o-' || (",
                                          t, " % 5), 'E', jsonb_build_object('t', ", t,
                                          ", 'j', j) "
                                          "FROM generate_series(1, 3) j"))
                      .ok());
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  ASSERT_TRUE(WaitFor([&] { return consumer->Count() >= 150; }, absl::Seconds(60)));
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  publisher_ = StartPublisher();
  writer.join();
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(120)));

  auto rows = ValueOrDie(sql_->Exec("SELECT id::text FROM outbox"));
  DistinctIds(*consumer, rows.size());
  std::map<std::string, std::string> value_by_id;
  for (const auto& r : consumer->Records()) {
    std::string id = Header(r, "id");
    auto [it, fresh] = value_by_id.emplace(id, r.value);
    if (!fresh) {
      EXPECT_EQ(it->second, r.value) << "a redelivery changed message " << id;
    }
  }
  EXPECT_EQ(rows.size(), 900u);
  for (const auto& row : rows)
    EXPECT_EQ(value_by_id.count(*row[0]), 1u) << "lost " << *row[0];
  EXPECT_EQ(value_by_id.size(), rows.size());
}

// docs/implicit-ack.md: with several requests of a partition in flight, injected
// Produce errors make librdkafka report messages delivered that mock-kafka never
// stored. The publisher must not count those: it rewinds to the slot, so once the
// slot is confirmed to the end every row is in the broker, and a kill -9 (no
// PostgreSQL restart to set the slot back and hide an early confirmation) loses
// nothing.
TEST_F(PublisherTest, ImplicitAckRewindsAndNothingConfirmedIsLost) {
  publisher_ = StartPublisher({"-X", "max.in.flight.requests.per.connection=5", "-X",
                               "batch.num.messages=4", "-X", "linger.ms=0", "-X",
                               "retry.backoff.ms=10"});
  auto consumer = StartConsumer();
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    auto session = ValueOrDie(cluster_->Connect());
    for (int t = 0; writing && t < 20000; ++t) {
      ASSERT_TRUE(
          session
              ->Exec(absl::StrCat("INSERT INTO outbox (aggregate_type, "
                                  "aggregate_id, event_type, payload) SELECT "
                                  "'order', 'o-' || (j % 4), 'E', "
                                  "jsonb_build_object('t', ",
                                  t, ") FROM generate_series(1, 1 + ", t % 3, ") j"))
              .ok());
    }
  });
  const std::string kUnproven = "without proof of storage";
  for (int burst = 0; burst < 400 && !absl::StrContains(publisher_->Log(), kUnproven);
       ++burst) {
    ASSERT_EQ(mock_->Command("errors Produce NOT_LEADER_FOR_PARTITION "
                             "NOT_LEADER_FOR_PARTITION REQUEST_TIMED_OUT"),
              "ok");
    absl::SleepFor(absl::Milliseconds(50));
  }
  writing = false;
  writer.join();
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(120)))
      << "the slot never caught up";
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(30));

  auto rows = ValueOrDie(sql_->Exec("SELECT id::text FROM outbox"));
  std::set<std::string> ids = DistinctIds(*consumer, rows.size());
  size_t lost = 0;
  for (const auto& row : rows) lost += !ids.count(*row[0]);
  EXPECT_EQ(lost, 0u) << "of " << rows.size()
                      << " rows confirmed in the slot, these never reached the broker";
  EXPECT_THAT(publisher_->Log(), HasSubstr(kUnproven))
      << "no implicit ack happened: the test did not exercise the rewind";
  EXPECT_THAT(publisher_->Log(), HasSubstr("rewinding to the slot"));
}

// --version names the three versions an operator reports with a bug, and the
// startup line carries the same, so a log alone tells what was running.
TEST_F(PublisherTest, VersionPrintsItsOwnLibrdkafkaAndLibpqVersions) {
  std::string out_path = absl::StrCat(cluster_->dir(), "/version.out");
  auto p = ValueOrDie(Process::Start(
      {harness::BuildPath("outbox-publisher"), "--version"}, out_path));
  EXPECT_EQ(p->Wait(absl::Seconds(30)), 0);
  std::string expected_kafka = absl::StrCat("librdkafka ", rd_kafka_version_str(), ", ");
  EXPECT_THAT(p->Log(), ::testing::MatchesRegex(
                            "outbox-publisher [0-9]+\\.[0-9]+\\.[0-9]+ \\(librdkafka "
                            "[0-9.]+, libpq [0-9]+\\.[0-9]+\\)\n"));
  EXPECT_THAT(p->Log(), HasSubstr(expected_kafka));

  publisher_ = StartPublisher();
  EXPECT_THAT(publisher_->Log(), HasSubstr(absl::StrCat("\"librdkafka_version\":\"",
                                                        rd_kafka_version_str())));
  EXPECT_THAT(publisher_->Log(), HasSubstr("\"libpq_version\":\""));
  EXPECT_THAT(publisher_->Log(), HasSubstr("\"version\":\""));
}

TEST_F(PublisherTest, SurvivesPostgresRestartAndTerminatedWalsender) {
  publisher_ = StartPublisher();
  auto consumer = StartConsumer();
  auto write = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      ASSERT_TRUE(sql_->Exec(absl::StrCat("INSERT INTO outbox_bin VALUES (", i,
                                          ", 'bin', 'k', 'E', '\\x01')"))
                      .ok());
    }
  };
  write(0, 50);
  ASSERT_TRUE(
      sql_->Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots")
          .ok());
  write(50, 100);
  sql_.reset();
  ASSERT_TRUE(cluster_->Restart("fast").ok());
  sql_ = ValueOrDie(cluster_->Connect());
  write(100, 150);
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(120)))
      << publisher_->Log();
  EXPECT_EQ(DistinctIds(*consumer, 150).size(), 150u);
  EXPECT_TRUE(publisher_->running());
  EXPECT_THAT(publisher_->Log(), HasSubstr("replication connection lost; reconnecting"));
  EXPECT_THAT(publisher_->Log(), HasSubstr("replication session restarted"));
}

TEST_F(PublisherTest, TwoPublishersOnOneSlotFormAHotStandbyPair) {
  publisher_ = StartPublisher();
  auto standby = ValueOrDie(
      Process::Start({harness::BuildPath("outbox-publisher"), "--pg",
                      cluster_->conninfo(), "--brokers", mock_->bootstrap(), "--table",
                      "outbox,outbox_bin", "--status-interval", "500ms"},
                     absl::StrCat(cluster_->dir(), "/standby.log")));
  ASSERT_TRUE(WaitFor(
      [&] {
        return standby->Log().find("standing by to take over") != std::string::npos;
      },
      absl::Seconds(60)))
      << standby->Log();
  auto consumer = StartConsumer();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(sql_->Exec(absl::StrCat("INSERT INTO outbox_bin VALUES (", i,
                                        ", 'bin', 'k', 'E', '\\x01')"))
                    .ok());
  }
  ASSERT_TRUE(WaitFor([&] { return consumer->Count() >= 20; }, absl::Seconds(60)));
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(10));
  absl::Time killed = absl::Now();
  for (int i = 20; i < 40; ++i) {
    ASSERT_TRUE(sql_->Exec(absl::StrCat("INSERT INTO outbox_bin VALUES (", i,
                                        ", 'bin', 'k', 'E', '\\x01')"))
                    .ok());
  }
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)))
      << standby->Log();
  EXPECT_LT(absl::Now() - killed, absl::Seconds(30)) << "takeover took too long";
  EXPECT_EQ(DistinctIds(*consumer, 40).size(), 40u);
  standby->Signal(SIGTERM);
  EXPECT_EQ(standby->Wait(absl::Seconds(60)), 0) << standby->Log();
}

// No output ever shows a secret: a password planted in the conninfo and in secret
// librdkafka properties must not appear in any log line, at the most verbose level,
// through start, streaming, stats and stop.
TEST_F(PublisherTest, PlantedSecretsNeverReachTheLog) {
  const std::string kPgSecret = "PlantedPgSecret-7f3a";
  const std::string kKafkaSecret = "PlantedKafkaSecret-91c2";
  publisher_ = StartPublisher(
      {"--pg", absl::StrCat(cluster_->conninfo(), " password=", kPgSecret), "--log-level",
       "debug", "-X", absl::StrCat("sasl.password=", kKafkaSecret), "-X",
       absl::StrCat("ssl.key.password=", kKafkaSecret), "-X", "debug=conf,broker"});
  auto consumer = StartConsumer();
  ASSERT_TRUE(sql_->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) VALUES ('order', 'o-1', 'E', '{}')")
                  .ok());
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)));
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(publisher_->Log(), "\"stats\""); },
                      absl::Seconds(30)));
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0);
  std::string log = publisher_->Log();
  EXPECT_THAT(log, HasSubstr("password=********"))
      << "the planted secret was not configured";
  EXPECT_THAT(log, HasSubstr("\"X.sasl.password\":\"********\""));
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    EXPECT_FALSE(absl::StrContains(line, kPgSecret)) << line;
    EXPECT_FALSE(absl::StrContains(line, kKafkaSecret)) << line;
  }
}

TEST_F(PublisherTest, IdleOutboxDoesNotPinWal) {
  publisher_ = StartPublisher();
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(
        sql_->Exec("INSERT INTO other (v) SELECT 'x' FROM generate_series(1, 1000)")
            .ok());
    Lsn target = WalInsert();
    ASSERT_TRUE(WaitFor([&] { return Confirmed() >= target; }, absl::Seconds(30)))
        << "round " << round << ": confirmed " << Confirmed() << " stayed behind "
        << target;
  }
  EXPECT_TRUE(publisher_->running());
}

}  // namespace
}  // namespace publisher

// --delivery=exactly-once end to end: the publisher binary against a throwaway
// PostgreSQL and mock-kafka. mock-kafka writes no transaction markers, so its
// read_committed consumers also see records of aborted transactions
// (mock_transactions_test.cc): here every committed row must arrive (a kill -9
// turns any confirmation ahead of a Kafka commit into a lost row), and that no row
// arrives twice for a read_committed consumer is shown on Apache Kafka
// (real_kafka_test.cc), which writes markers.
#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/delivery/checkpoint.h"
#include "publisher/kafka/checkpoint_reader.h"
#include "publisher/program/options.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ExactlyOnceTest : public PublisherTest {
 protected:
  void SetUp() override {
    PublisherTest::SetUp();
    ASSERT_EQ(mock_->Command("topic outbox.checkpoints 1"), "ok");
  }

  // A publisher in exactly-once mode, with a log of its own, once it has made its
  // transactional producer (after it holds the slot).
  std::unique_ptr<Process> Start() {
    log_path_ = absl::StrCat(cluster_->dir(), "/publisher-", ++started_, ".log");
    std::unique_ptr<Process> p = StartPublisher(kExactlyOnce);
    EXPECT_TRUE(WaitFor([&] { return absl::StrContains(p->Log(), "exactly-once: "); },
                        absl::Seconds(60)))
        << p->Log();
    return p;
  }

  // Commits `transactions` transactions of 1 to 3 rows, numbered from `next_`.
  void Write(int transactions) {
    for (int t = 0; t < transactions; ++t, ++next_) {
      ASSERT_TRUE(
          sql_->Exec(absl::StrCat("INSERT INTO outbox (aggregate_type, aggregate_id, "
                                  "event_type, payload) SELECT 'order', 'o-' || (",
                                  next_, " % 5), 'E', jsonb_build_object('t', ", next_,
                                  ", 'j', j) FROM generate_series(1, 1 + ", next_ % 3,
                                  ") j"))
              .ok());
    }
  }

  // Once the slot is confirmed to the end: the committed rows no record carries,
  // and the records mock-kafka shows (aborted transactions' included).
  struct Verdict {
    size_t rows = 0, lost = 0, raw = 0;
  };
  Verdict Verify() {
    Lsn end = WalInsert();
    EXPECT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(120)))
        << "the slot did not catch up: " << Confirmed() << " < " << end;
    auto rows = ValueOrDie(sql_->Exec("SELECT id::text FROM outbox"));
    Verdict v;
    v.rows = rows.size();
    // A fresh consumer: one connected through "down all" may stall on the mock.
    auto consumer = StartConsumer();
    std::set<std::string> ids = DistinctIds(*consumer, rows.size());
    v.raw = consumer->Count();
    for (const auto& row : rows) v.lost += ids.count(*row[0]) == 0;
    return v;
  }

  // Writes `value` to the checkpoint topic under the default transactional id.
  void ProduceCheckpoint(const std::string& value) {
    ASSERT_TRUE(
        harness::ProduceAll(mock_->bootstrap(), "outbox.checkpoints",
                                    {{"outbox-publisher.outbox_publisher", value}})
            .ok());
  }

  // This cluster's system identifier, as IDENTIFY_SYSTEM gives it.
  std::string SystemIdentifier() {
    return *ValueOrDie(
        sql_->Exec("SELECT system_identifier::text FROM "
                   "pg_control_system()"))[0][0];
  }

  // The latest checkpoint of the default transactional id in the checkpoint topic.
  std::optional<Checkpoint> LatestCommitted() {
    Config config;
    config.brokers = mock_->bootstrap();
    auto records = ValueOrDie(ReadCheckpointTopic(
        KafkaOptionsFrom(config), "outbox.checkpoints", absl::Seconds(30)));
    return ValueOrDie(LatestCheckpoint(records, "outbox-publisher.outbox_publisher"));
  }

  int next_ = 0;
  int started_ = 0;
};

TEST_F(ExactlyOnceTest, NoRowLostAcrossKill9SigtermBrokerOutageAndPostgresRestart) {
  publisher_ = Start();
  Write(30);
  // kill -9 while a writer commits: mid-transaction, Kafka transactions open.
  {
    std::atomic<bool> writing{true};
    std::thread writer([&] {
      auto session = ValueOrDie(cluster_->Connect());
      for (int t = 0; writing && t < 2000; ++t) {
        ASSERT_TRUE(session
                        ->Exec(absl::StrCat("INSERT INTO outbox (aggregate_type, "
                                            "aggregate_id, event_type, payload) SELECT "
                                            "'user', 'u-' || j, 'E', jsonb_build_object("
                                            "'w', ",
                                            t, ") FROM generate_series(1, 4) j"))
                        .ok());
      }
    });
    ASSERT_TRUE(WaitFor([&] { return Confirmed() > Lsn(0); }, absl::Seconds(60)));
    publisher_->Signal(SIGKILL);
    publisher_->Wait(absl::Seconds(30));
    publisher_ = Start();
    // Let it commit some of the writer's rows, then stop it amid the rest.
    Lsn at_start = Confirmed();
    ASSERT_TRUE(WaitFor([&] { return Confirmed() > at_start; }, absl::Seconds(60)));
    publisher_->Signal(SIGTERM);
    EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
    writing = false;
    writer.join();
  }
  publisher_ = Start();
  // Broker outage: the open Kafka transaction fails and is aborted; the rewind
  // waits for the brokers.
  ASSERT_EQ(mock_->Command("down all"), "ok");
  Write(30);
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(publisher_->Log(), "Kafka transaction failed") ||
               absl::StrContains(publisher_->Log(), "cannot create the Kafka producer");
      },
      absl::Seconds(90)))
      << publisher_->Log();
  ASSERT_EQ(mock_->Command("up all"), "ok");
  // The walsender terminated, then PostgreSQL restarted (PostgreSQL 15 sets the slot
  // back: the checkpoint must skip what Kafka holds).
  Write(10);
  ASSERT_TRUE(
      sql_->Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots")
          .ok());
  Write(10);
  sql_.reset();
  ASSERT_TRUE(cluster_->Restart("fast").ok());
  sql_ = ValueOrDie(cluster_->Connect());
  Write(30);

  Verdict v = Verify();
  EXPECT_GT(v.rows, 200u);
  EXPECT_EQ(v.lost, 0u) << "of " << v.rows << " rows";
  std::cerr << "exactly-once: " << v.rows << " rows, none lost; mock-kafka shows "
            << v.raw << " records in all (aborted ones included: it writes no markers)\n";
  EXPECT_TRUE(publisher_->running()) << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), HasSubstr("exactly-once: resuming after the latest "
                                           "committed checkpoint"));
}

TEST_F(ExactlyOnceTest,
       TransactionsTheCheckpointCoversAreSkippedHoweverFarBackTheSlotIs) {
  // The slot stands before rows that Kafka already holds (PostgreSQL 15 set it back
  // at a restart, after their Kafka transaction committed): the checkpoint says so,
  // written here as that Kafka transaction would have written it.
  publisher_ = Start();
  Write(5);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)));
  publisher_->Signal(SIGTERM);
  ASSERT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  auto count = [&] { return ValueOrDie(sql_->Exec("SELECT 1 FROM outbox")).size(); };
  size_t published_before = count();
  Write(20);  // "Already in Kafka": covered by the checkpoint below.
  size_t covered = count() - published_before;
  Lsn covered_to = WalInsert();
  ProduceCheckpoint(EncodeCheckpoint({covered_to, 1, absl::Now(), SystemIdentifier()},
                                     "outbox-publisher.outbox_publisher", absl::Now()));
  Write(10);  // After the checkpoint: published.
  publisher_ = Start();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)))
      << "skipped transactions must be confirmed too";
  auto consumer = StartConsumer();
  size_t rows = count();
  std::set<std::string> ids = DistinctIds(*consumer, rows - covered);
  EXPECT_EQ(ids.size(), rows - covered);
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(publisher_->Log(), "\"stats\""); },
                      absl::Seconds(30)));
  EXPECT_THAT(publisher_->Log(), HasSubstr(absl::StrCat("\"rows_skipped\":", covered)));
  EXPECT_THAT(publisher_->Log(), HasSubstr(covered_to.ToString()));
}

TEST_F(ExactlyOnceTest, ACheckpointOfAnotherClusterIsRefusedNotResumedFrom) {
  // The checkpoints this publisher commits name this cluster.
  publisher_ = Start();
  Write(5);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)));
  publisher_->Signal(SIGTERM);
  ASSERT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  std::optional<Checkpoint> mine = LatestCommitted();
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(mine->system_id, SystemIdentifier());

  // Then the transactional id's latest checkpoint is another cluster's, far ahead
  // in its WAL (the id reused for another database, or this database re-created
  // while Kafka kept the topic): resuming after it would skip every row below.
  Lsn confirmed = Confirmed();
  const Lsn kAhead(0xFFFFFF000000);
  ProduceCheckpoint(EncodeCheckpoint({kAhead, 1, absl::Now(), "1234"},
                                     "outbox-publisher.outbox_publisher", absl::Now()));
  Write(5);
  // It stops moments after it logs "streaming", so not StartPublisher, which
  // expects a running process at that point.
  auto p = ValueOrDie(Process::Start(
      PublisherArgv(kExactlyOnce), absl::StrCat(cluster_->dir(), "/other-cluster.log")));
  EXPECT_EQ(p->Wait(absl::Seconds(60)), 1) << p->Log();
  EXPECT_THAT(p->Log(),
              HasSubstr(absl::StrCat("written for another PostgreSQL cluster (system "
                                     "identifier 1234, at LSN ",
                                     kAhead.ToString(), ")")));
  EXPECT_EQ(Confirmed(), confirmed)
      << "rows after the checkpoint were taken as published";

  // The way out the error names: delete the checkpoint, start over from the slot.
  ProduceCheckpoint("");
  publisher_ = Start();
  EXPECT_EQ(Verify().lost, 0u);
}

TEST_F(ExactlyOnceTest, AStandbyMakesNoTransactionalProducerUntilItTakesOver) {
  // Initializing a transactional producer fences every other instance of its id: a
  // standby that did so at start would stop the active publisher on a real broker.
  publisher_ = Start();
  std::vector<std::string> argv = PublisherArgv(kExactlyOnce);
  auto standby =
      ValueOrDie(Process::Start(argv, absl::StrCat(cluster_->dir(), "/standby.log")));
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(standby->Log(), "standing by"); },
                      absl::Seconds(60)))
      << standby->Log();
  Write(20);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)));
  EXPECT_FALSE(absl::StrContains(standby->Log(), "exactly-once:"))
      << "the standby made its transactional producer while standing by";
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(30));
  Write(20);
  ASSERT_TRUE(
      WaitFor([&] { return absl::StrContains(standby->Log(), "exactly-once: resuming"); },
              absl::Seconds(60)))
      << standby->Log();
  EXPECT_EQ(Verify().lost, 0u);
  standby->Signal(SIGTERM);
  EXPECT_EQ(standby->Wait(absl::Seconds(60)), 0) << standby->Log();
}

TEST_F(ExactlyOnceTest, AMissingCheckpointTopicThatCannotBeCreatedStopsAtStart) {
  // mock-kafka never answers CreateTopics. Streaming on, with the first checkpoint
  // auto-creating its topic, is how a fault run lost rows: no streaming
  // without a place for checkpoints. (On a real cluster the publisher creates the
  // topic: real_kafka_test.cc.)
  std::vector<std::string> argv =
      PublisherArgv({"--checkpoint-topic", "fresh.checkpoints"});
  argv.insert(argv.end(), kExactlyOnce.begin(), kExactlyOnce.end());
  auto p = ValueOrDie(Process::Start(argv, absl::StrCat(cluster_->dir(), "/fresh.log")));
  EXPECT_EQ(p->Wait(absl::Seconds(60)), 2) << p->Log();
  EXPECT_THAT(
      p->Log(),
      HasSubstr("needs the checkpoint topic fresh.checkpoints, which does not exist "
                "and could not be created"));
  EXPECT_THAT(p->Log(), Not(HasSubstr("\"msg\":\"streaming\"")));
  EXPECT_TRUE(ValueOrDie(sql_->Exec("SELECT 1 FROM pg_replication_slots")).empty())
      << "a failed start left a slot behind";
}

TEST_F(ExactlyOnceTest, AMissingCheckpointTopicThatMayNotBeCreatedStopsAtStart) {
  std::vector<std::string> argv =
      PublisherArgv({"--create=false", "--checkpoint-topic", "no.such.topic"});
  argv.insert(argv.end(), kExactlyOnce.begin(), kExactlyOnce.end());
  auto p =
      ValueOrDie(Process::Start(argv, absl::StrCat(cluster_->dir(), "/missing.log")));
  EXPECT_EQ(p->Wait(absl::Seconds(60)), 2) << p->Log();
  EXPECT_THAT(p->Log(), HasSubstr("no.such.topic does not exist: create it compacted"));
  EXPECT_TRUE(ValueOrDie(sql_->Exec("SELECT 1 FROM pg_replication_slots")).empty())
      << "a failed start left a slot behind";
}

}  // namespace
}  // namespace publisher

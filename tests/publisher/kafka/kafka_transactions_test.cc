// KafkaTransactions against mock-kafka: a committed transaction carries its records
// and its checkpoint, which ReadCheckpointTopic finds; abort and a new transaction
// after it work. (What the mock cannot show, read_committed filtering and fencing,
// is pinned down in mock_transactions_test.cc.)
#include "publisher/kafka/kafka_transactions.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/kafka/checkpoint_reader.h"
#include "publisher/kafka/kafka_sink.h"
#include "publisher/program/options.h"
#include "tests/test_util.h"
#include "tools/harness/processes.h"

namespace publisher {
namespace {

using cdc::Lsn;
using harness::Consumer;
using harness::MockKafka;
using harness::WaitFor;
using test_util::ValueOrDie;

const absl::Time kT = absl::FromUnixSeconds(1'800'000'000);

OutboxRecord Record(const std::string& id) {
  OutboxRecord r;
  r.topic = "outbox.event.order";
  r.key = "o-1";
  r.value = id;
  r.id = id;
  r.headers = {{"id", id}};
  r.timestamp_ms = absl::ToUnixMillis(kT);
  return r;
}

TEST(KafkaTransactionsTest, CommitCarriesTheRecordsAndTheCheckpoint) {
  auto mock = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock->Command("topic outbox.event.order 2"), "ok");
  ASSERT_EQ(mock->Command("topic outbox.checkpoints 1"), "ok");
  Config config;
  config.brokers = mock->bootstrap();
  common::Logger log(common::LogFormat::kJson, common::LogLevel::kError);
  auto txn = ValueOrDie(KafkaTransactions::Create(
      KafkaOptionsFrom(config), log, "outbox-publisher.test", "outbox.checkpoints"));
  ASSERT_TRUE(txn->Init(absl::Seconds(30)).ok());

  ASSERT_TRUE(txn->Begin().ok());
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(txn->Produce(Record(id)).ok());
  absl::Status committed = CommitAndWait(*txn, {Lsn(0x300), 3, kT}, absl::Seconds(30));
  ASSERT_TRUE(committed.ok()) << committed;

  auto read = ValueOrDie(ReadCheckpointTopic(KafkaOptionsFrom(config),
                                             "outbox.checkpoints", absl::Seconds(30)));
  auto latest = ValueOrDie(LatestCheckpoint(read, "outbox-publisher.test"));
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->end_lsn, Lsn(0x300));
  EXPECT_EQ(latest->xid, 3u);

  auto consumer = ValueOrDie(Consumer::Start(mock->bootstrap(), {"outbox.event.order"}));
  EXPECT_TRUE(WaitFor([&] { return consumer->Count() >= 3; }, absl::Seconds(30)));

  // An aborted transaction, then a committed one: the checkpoint moves on.
  ASSERT_TRUE(txn->Begin().ok());
  ASSERT_TRUE(txn->Produce(Record("d")).ok());
  ASSERT_TRUE(txn->Abort(absl::Seconds(30)).ok());
  ASSERT_TRUE(txn->Begin().ok());
  ASSERT_TRUE(txn->Produce(Record("d")).ok());
  ASSERT_TRUE(CommitAndWait(*txn, {Lsn(0x400), 4, kT}, absl::Seconds(30)).ok());
  read = ValueOrDie(ReadCheckpointTopic(KafkaOptionsFrom(config), "outbox.checkpoints",
                                        absl::Seconds(30)));
  EXPECT_EQ(ValueOrDie(LatestCheckpoint(read, "outbox-publisher.test"))->end_lsn,
            Lsn(0x400));
}

// A checkpoint must never be stored while a record of its transaction is not: a
// broker without transaction markers (this mock) would show the checkpoint, and the
// next instance would skip rows that were never stored.
TEST(KafkaTransactionsTest, NoCheckpointIsStoredBeforeEveryRecordOfItsTransaction) {
  auto mock = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock->Command("topic outbox.checkpoints 1"), "ok");
  // The records' topic cannot be found: they stay queued, the checkpoint's could go.
  ASSERT_EQ(mock->Command("topic-error outbox.event.order LEADER_NOT_AVAILABLE"), "ok");
  Config config;
  config.brokers = mock->bootstrap();
  common::Logger log(common::LogFormat::kJson, common::LogLevel::kError);
  auto txn = ValueOrDie(KafkaTransactions::Create(
      KafkaOptionsFrom(config), log, "outbox-publisher.test", "outbox.checkpoints"));
  ASSERT_TRUE(txn->Init(absl::Seconds(30)).ok());
  ASSERT_TRUE(txn->Begin().ok());
  ASSERT_TRUE(txn->Produce(Record("a")).ok());
  absl::Status committed = CommitAndWait(*txn, {Lsn(0x300), 3, kT}, absl::Seconds(2));
  EXPECT_FALSE(committed.ok());
  auto read = ValueOrDie(ReadCheckpointTopic(KafkaOptionsFrom(config),
                                             "outbox.checkpoints", absl::Seconds(30)));
  EXPECT_TRUE(read.empty()) << "a checkpoint was stored without its record";
}

// Unproven deliveries in a transaction: after injected Produce errors, librdkafka can report a record of a
// transaction delivered that no broker stored (no offset: an implicit or
// duplicate-sequence acknowledgement), and the commit still succeeds. Every
// transaction whose Commit returned OK must have all its records stored; one
// that cannot prove it must fail instead (and is then aborted and produced again).
TEST(KafkaTransactionsTest, ACommitNeverCoversARecordWithoutProofOfStorage) {
  auto mock = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock->Command("topic outbox.event.order 8"), "ok");
  ASSERT_EQ(mock->Command("topic outbox.checkpoints 1"), "ok");
  Config config;
  config.brokers = mock->bootstrap();
  config.kafka_properties = {{"retry.backoff.ms", "5"},
                             {"max.in.flight.requests.per.connection", "5"}};
  common::Logger log(common::LogFormat::kJson, common::LogLevel::kError);
  std::vector<std::vector<std::string>> committed;
  int failed = 0;
  std::unique_ptr<KafkaTransactions> txn;
  for (int round = 0; round < 40; ++round) {
    if (txn == nullptr) {
      txn = ValueOrDie(KafkaTransactions::Create(
          KafkaOptionsFrom(config), log, "outbox-publisher.test", "outbox.checkpoints"));
      ASSERT_TRUE(txn->Init(absl::Seconds(30)).ok());
    }
    if (round % 4 == 0) {
      std::string errors = "errors Produce";
      for (int i = 0; i < 20; ++i) errors += " NOT_LEADER_FOR_PARTITION";
      errors += " UNKNOWN_PRODUCER_ID";
      ASSERT_EQ(mock->Command(errors), "ok");
    }
    ASSERT_TRUE(txn->Begin().ok());
    std::vector<std::string> ids;
    for (int i = 0; i < 50; ++i) {
      OutboxRecord r = Record(absl::StrCat("r", round, "-", i));
      r.key = absl::StrCat("k", i % 16);
      ASSERT_TRUE(txn->Produce(r).ok());
      ids.push_back(r.value);
    }
    absl::Status s = CommitAndWait(*txn, {Lsn(0x100 + round), 3, kT}, absl::Seconds(30));
    if (s.ok()) {
      committed.push_back(ids);
    } else {
      ++failed;
      // The same producer goes on after the abort (librdkafka bumped its epoch).
      ASSERT_TRUE(txn->Abort(absl::Seconds(30)).ok());
    }
  }
  ASSERT_EQ(mock->Command("clear-errors Produce"), "ok");
  size_t expected = 0;
  for (const auto& ids : committed) expected += ids.size();
  auto consumer = ValueOrDie(Consumer::Start(mock->bootstrap(), {"outbox.event.order"}));
  // Until every committed record has arrived (or the deadline): a count would
  // also include the aborted transactions' records, which mock-kafka serves, and
  // could be reached before the last committed ones arrive on a loaded machine.
  size_t missing = 0;
  WaitFor(
      [&] {
        std::set<std::string> stored;
        for (const auto& r : consumer->Records()) stored.insert(r.value);
        missing = 0;
        for (const auto& ids : committed) {
          for (const auto& id : ids) missing += stored.count(id) == 0;
        }
        return missing == 0;
      },
      absl::Seconds(30));
  EXPECT_EQ(missing, 0u) << "of " << expected << " records in " << committed.size()
                         << " committed transactions (" << failed << " failed)";
  EXPECT_GT(committed.size(), 20u);
}

TEST(KafkaTransactionsTest, ABadPropertyIsInvalidArgument) {
  Config config;
  config.kafka_properties = {{"no.such.property", "1"}};
  common::Logger log(common::LogFormat::kJson, common::LogLevel::kError);
  auto txn = KafkaTransactions::Create(KafkaOptionsFrom(config), log, "t", "c");
  EXPECT_EQ(txn.status().code(), absl::StatusCode::kInvalidArgument);
}

// The value librdkafka ends with: properties apply in order, the last one wins.
std::string LastValue(const std::vector<std::pair<std::string, std::string>>& properties,
                      const std::string& key) {
  std::string value;
  for (const auto& [k, v] : properties) {
    if (k == key) value = v;
  }
  return value;
}

TEST(TransactionalProducerPropertiesTest, TransactionsOverThePublishersSettings) {
  Config config;
  config.brokers = "b:9092";
  config.max_in_flight = 1000;
  config.max_in_flight_bytes = 4 << 20;
  auto p = TransactionalProducerProperties(KafkaOptionsFrom(config), "tid");
  EXPECT_EQ(LastValue(p, "bootstrap.servers"), "b:9092");
  EXPECT_EQ(LastValue(p, "acks"), "all");
  EXPECT_EQ(LastValue(p, "transactional.id"), "tid");
  EXPECT_EQ(LastValue(p, "message.timeout.ms"), "55000")
      << "a record must time out within transaction.timeout.ms";
  EXPECT_EQ(LastValue(p, "transaction.timeout.ms"), "60000");
  EXPECT_EQ(LastValue(p, "queue.buffering.max.messages"), "1001");
  EXPECT_EQ(LastValue(p, "queue.buffering.max.kbytes"), std::to_string(4096 + 1024));
  // At-least-once lingers 2 ms; a transaction's records are invisible until it
  // commits, and lingering made exactly-once backlogs slower (the comment there).
  EXPECT_EQ(LastValue(DefaultProducerProperties(KafkaOptionsFrom(config)), "linger.ms"),
            "2");
  EXPECT_EQ(LastValue(p, "linger.ms"), "0");
}

}  // namespace
}  // namespace publisher

// What librdkafka 2.0.2's mock cluster does with Kafka transactions, which
// --delivery=exactly-once will be tested against. Characterization
// tests: they pin down the mock's behaviour, so that a newer librdkafka whose mock
// behaves differently fails here first and says which assumption changed.
//
// Found in src/rdkafka_mock_handlers.c (v2.0.2) and shown below:
//   - EndTxn only checks the producer id and epoch: no commit or abort marker is
//     written to the partitions, and the Fetch handler always answers
//     LastStableOffset = the high watermark and no aborted transactions. So a
//     read_committed consumer sees the records of ABORTED transactions too, and
//     sees records of an open transaction before it commits. "Aborted transactions
//     leave nothing visible" cannot be tested against this mock.
//   - InitProducerId from a new instance (no current producer id) creates a NEW
//     producer id for the same transactional id (rd_kafka_mock_pid_new) instead of
//     bumping the epoch of the existing one, as a real broker does. So the older
//     instance is never fenced: it keeps committing. Fencing cannot be tested
//     against this mock either.
#include <librdkafka/rdkafka.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/kafka/handles.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"
#include "tools/harness/processes.h"

namespace publisher {
namespace {

using harness::Consumer;
using harness::MockKafka;
using harness::WaitFor;
using test_util::ValueOrDie;

constexpr char kTopic[] = "txn.characterization";

using Producer = common::KafkaClient;

Producer TransactionalProducer(const std::string& bootstrap, const std::string& id) {
  absl::StatusOr<common::KafkaConf> conf = common::NewKafkaConf(
      {{"bootstrap.servers", bootstrap}, {"transactional.id", id}}, {});
  EXPECT_TRUE(conf.ok()) << conf.status();
  if (!conf.ok()) return nullptr;
  absl::StatusOr<common::KafkaClient> rk = common::NewKafkaClient(
      RD_KAFKA_PRODUCER, *std::move(conf), {}, "a transactional producer");
  EXPECT_TRUE(rk.ok()) << rk.status();
  return rk.ok() ? *std::move(rk) : nullptr;
}

// The error of a transactional call, "" when it succeeded.
std::string Check(rd_kafka_error_t* error) {
  common::KafkaError owned(error);
  return owned == nullptr ? "" : rd_kafka_error_name(owned.get());
}

void Produce(rd_kafka_t* rk, const std::string& key) {
  ASSERT_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(kTopic),
                              RD_KAFKA_V_KEY(key.data(), key.size()),
                              RD_KAFKA_V_VALUE(const_cast<char*>(key.data()), key.size()),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
}

bool Seen(Consumer& consumer, const std::string& key) {
  for (const auto& r : consumer.Records()) {
    if (r.key == key) return true;
  }
  return false;
}

TEST(MockTransactionsTest, ReadCommittedStillSeesAbortedAndOpenTransactions) {
  auto mock = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock->Command(absl::StrCat("topic ", kTopic, " 1")), "ok");
  Producer p = TransactionalProducer(mock->bootstrap(), "characterization");
  ASSERT_EQ(Check(rd_kafka_init_transactions(p.get(), 30000)), "");

  ASSERT_EQ(Check(rd_kafka_begin_transaction(p.get())), "");
  Produce(p.get(), "aborted");
  ASSERT_EQ(Check(rd_kafka_flush(p.get(), 30000) == RD_KAFKA_RESP_ERR_NO_ERROR
                      ? nullptr
                      : rd_kafka_error_new(RD_KAFKA_RESP_ERR__TIMED_OUT, "flush")),
            "");
  ASSERT_EQ(Check(rd_kafka_abort_transaction(p.get(), 30000)), "");

  ASSERT_EQ(Check(rd_kafka_begin_transaction(p.get())), "");
  Produce(p.get(), "committed");
  ASSERT_EQ(Check(rd_kafka_commit_transaction(p.get(), 30000)), "");

  ASSERT_EQ(Check(rd_kafka_begin_transaction(p.get())), "");
  Produce(p.get(), "open");
  ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);

  // The harness consumer reads with librdkafka's default isolation.level,
  // read_committed.
  auto consumer = ValueOrDie(Consumer::Start(mock->bootstrap(), {kTopic}));
  ASSERT_TRUE(WaitFor([&] { return Seen(*consumer, "committed"); }, absl::Seconds(30)));
  EXPECT_TRUE(
      WaitFor([&] { return Seen(*consumer, "aborted") && Seen(*consumer, "open"); },
              absl::Seconds(30)))
      << "the mock now hides aborted or open transactions from read_committed "
         "consumers: exactly-once tests can rely on it";
  // No control records: the three data records sit at offsets 0, 1, 2.
  int64_t max_offset = -1;
  for (const auto& r : consumer->Records()) max_offset = std::max(max_offset, r.offset);
  EXPECT_EQ(max_offset, 2) << "the mock now writes transaction markers";
}

TEST(MockTransactionsTest, ANewInstanceWithTheSameTransactionalIdDoesNotFenceTheOld) {
  auto mock = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock->Command(absl::StrCat("topic ", kTopic, " 1")), "ok");
  Producer old_instance = TransactionalProducer(mock->bootstrap(), "pair");
  ASSERT_EQ(Check(rd_kafka_init_transactions(old_instance.get(), 30000)), "");
  ASSERT_EQ(Check(rd_kafka_begin_transaction(old_instance.get())), "");
  Produce(old_instance.get(), "old-1");
  ASSERT_EQ(Check(rd_kafka_commit_transaction(old_instance.get(), 30000)), "");

  Producer new_instance = TransactionalProducer(mock->bootstrap(), "pair");
  ASSERT_EQ(Check(rd_kafka_init_transactions(new_instance.get(), 30000)), "");

  ASSERT_EQ(Check(rd_kafka_begin_transaction(old_instance.get())), "");
  Produce(old_instance.get(), "old-2");
  std::string commit = Check(rd_kafka_commit_transaction(old_instance.get(), 30000));
  char reason[512];
  EXPECT_EQ(commit, "")
      << "the mock now fences an older instance (" << commit << ": "
      << (rd_kafka_fatal_error(old_instance.get(), reason, sizeof(reason)) ? reason : "")
      << "): test the publisher's fencing against it";
}

}  // namespace
}  // namespace publisher

// ReadCheckpointTopic against mock-kafka: it reads every partition to its end, and
// LatestCheckpoint picks the publisher's own checkpoint from what it read.
#include "publisher/kafka/checkpoint_reader.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/program/options.h"
#include "tests/test_util.h"
#include "tools/harness/processes.h"

namespace publisher {
namespace {

using cdc::Lsn;
using harness::MockKafka;
using test_util::ValueOrDie;
using ::testing::HasSubstr;

const absl::Time kT = absl::FromUnixSeconds(1'800'000'000);

TEST(CheckpointReaderTest, ReadsEveryPartitionToItsEnd) {
  auto mock = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock->Command("topic outbox.checkpoints 3"), "ok");
  Config config;
  config.brokers = mock->bootstrap();
  // Empty: no checkpoint yet.
  auto empty = ReadCheckpointTopic(KafkaOptionsFrom(config), "outbox.checkpoints",
                                   absl::Seconds(30));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(LatestCheckpoint(*empty, "me")->has_value());

  std::vector<std::pair<std::string, std::string>> records;
  for (int i = 1; i <= 50; ++i) {
    records.emplace_back(
        "me", EncodeCheckpoint({Lsn(0x100 * i), static_cast<uint32_t>(i), kT}, "me", kT));
    records.emplace_back(
        absl::StrCat("other-", i % 7),
        EncodeCheckpoint({Lsn(i), 1, kT}, absl::StrCat("other-", i % 7), kT));
  }
  ASSERT_TRUE(
      harness::ProduceAll(mock->bootstrap(), "outbox.checkpoints", records).ok());
  auto read = ReadCheckpointTopic(KafkaOptionsFrom(config), "outbox.checkpoints",
                                  absl::Seconds(30));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->size(), records.size());
  absl::StatusOr<std::optional<Checkpoint>> latest = LatestCheckpoint(*read, "me");
  ASSERT_TRUE(latest.ok()) << latest.status();
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->end_lsn, Lsn(0x100 * 50));
  EXPECT_EQ((*latest)->xid, 50u);
}

TEST(CheckpointReaderTest, AMissingTopicNamesTheFix) {
  auto mock = ValueOrDie(MockKafka::Start(1));
  Config config;
  config.brokers = mock->bootstrap();
  auto read = ReadCheckpointTopic(KafkaOptionsFrom(config), "no.such.checkpoints",
                                  absl::Seconds(30));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("create it compacted"));
}

}  // namespace
}  // namespace publisher

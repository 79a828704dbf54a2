// DeadLetterPolicy: --on-error's decision for a row that cannot be published.
#include "publisher/relay/dead_letter_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;

OutboxRecord Row() {
  OutboxRecord r;
  r.id = "r1";
  r.topic = "outbox.event.order";
  r.key = "k";
  r.value = "envelope";
  r.headers = {{"id", "r1"}};
  return r;
}

TEST(DeadLetterPolicyTest, HaltNamesTheRowAndKeepsTheCode) {
  DeadLetterPolicy halt(OnError::kHalt, "dlq");
  absl::StatusOr<OutboxRecord> letter =
      halt.Letter(Row(), absl::PermissionDeniedError("DENIED"), "delivery");
  ASSERT_FALSE(letter.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(letter.status()));
  EXPECT_THAT(letter.status().message(),
              HasSubstr("row r1 for topic outbox.event.order cannot be published "
                        "(delivery): DENIED"));
  EXPECT_THAT(letter.status().message(), HasSubstr("--on-error=dead-letter"));
}

TEST(DeadLetterPolicyTest, ADeadLetterCarriesTheRowAndTheError) {
  DeadLetterPolicy policy(OnError::kDeadLetter, "dlq");
  absl::StatusOr<OutboxRecord> letter =
      policy.Letter(Row(), absl::InvalidArgumentError("bad"), "produce");
  ASSERT_TRUE(letter.ok());
  EXPECT_EQ(letter->topic, "dlq");
  EXPECT_EQ(letter->key, "k");
  EXPECT_EQ(letter->value, "envelope");
  EXPECT_THAT(letter->headers,
              testing::ElementsAre(Pair("id", "r1"), Pair("error", "bad"),
                                   Pair("error_stage", "produce"),
                                   Pair("original_topic", "outbox.event.order")));
}

TEST(DeadLetterPolicyTest, TooLargeForAnyTopicDropsTheValue) {
  DeadLetterPolicy policy(OnError::kDeadLetter, "dlq");
  absl::StatusOr<OutboxRecord> letter = policy.Letter(
      Row(), absl::InvalidArgumentError("MSG_SIZE_TOO_LARGE (too large)"), "delivery");
  ASSERT_TRUE(letter.ok());
  EXPECT_TRUE(letter->value.empty());
  EXPECT_THAT(letter->headers, testing::Contains(Pair("value_dropped", "true")));
}

TEST(DeadLetterPolicyTest, ARejectedDeadLetterHalts) {
  DeadLetterPolicy policy(OnError::kDeadLetter, "dlq");
  absl::Status s = policy.Rejected("r1", absl::NotFoundError("UNKNOWN_TOPIC"));
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_THAT(s.message(), HasSubstr("the dead-letter topic dlq rejected row r1 too"));
}

}  // namespace
}  // namespace publisher

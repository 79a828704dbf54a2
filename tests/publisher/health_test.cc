#include "publisher/health.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(HealthTest, StreamingWithNothingInFlightIsHealthy) {
  HealthVerdict v = JudgeHealth({true, "", 0, std::nullopt, std::nullopt}, kNow);
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.reason, "ok");
}

TEST(HealthTest, NotStreamingSaysWhy) {
  HealthVerdict v = JudgeHealth(
      {false, "standing by: another publisher holds the slot", 0, std::nullopt,
       std::nullopt},
      kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, "not streaming: standing by: another publisher holds the slot");
  EXPECT_EQ(JudgeHealth({}, kNow).reason, "not streaming");
}

TEST(HealthTest, InFlightWithoutAcknowledgementsForThirtySecondsIsUnhealthy) {
  HealthVerdict v = JudgeHealth(
      {true, "", 7, kNow - absl::Seconds(31), kNow - absl::Seconds(45)}, kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.reason, HasSubstr("7 message(s) in flight and none acknowledged for 30s"));
  // Never acknowledged anything at all.
  EXPECT_FALSE(JudgeHealth({true, "", 1, kNow - absl::Seconds(30), std::nullopt}, kNow).ok);
}

TEST(HealthTest, RecentAcknowledgementsOrYoungWorkAreHealthy) {
  // A busy publisher: the oldest waits long, but acknowledgements keep coming.
  EXPECT_TRUE(JudgeHealth({true, "", 9, kNow - absl::Minutes(2), kNow - absl::Seconds(1)},
                          kNow)
                  .ok);
  // Work that arrived after a quiet hour: the last acknowledgement is old.
  EXPECT_TRUE(
      JudgeHealth({true, "", 3, kNow - absl::Seconds(29), kNow - absl::Hours(1)}, kNow).ok);
}

}  // namespace
}  // namespace publisher

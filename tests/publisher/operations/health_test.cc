#include "publisher/operations/health.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// Inputs without the replication-silence facts (not judged).
HealthInputs In(bool streaming, std::string reason, uint64_t in_flight,
                std::optional<absl::Time> oldest, std::optional<absl::Time> last_ack) {
  HealthInputs in;
  in.streaming = streaming;
  in.not_streaming_reason = std::move(reason);
  in.in_flight = in_flight;
  in.oldest_unacked = oldest;
  in.last_ack = last_ack;
  return in;
}

TEST(HealthTest, StreamingWithNothingInFlightIsHealthy) {
  HealthVerdict v = JudgeHealth(In(true, "", 0, std::nullopt, std::nullopt), kNow);
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.reason, "ok");
}

TEST(HealthTest, NotStreamingSaysWhy) {
  HealthVerdict v = JudgeHealth(In(false, "standing by: another publisher holds the slot",
                                   0, std::nullopt, std::nullopt),
                                kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, "not streaming: standing by: another publisher holds the slot");
  EXPECT_EQ(JudgeHealth(HealthInputs{}, kNow).reason, "not streaming");
}

TEST(HealthTest, InFlightWithoutAcknowledgementsForThirtySecondsIsUnhealthy) {
  HealthVerdict v = JudgeHealth(
      In(true, "", 7, kNow - absl::Seconds(31), kNow - absl::Seconds(45)), kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.reason,
              HasSubstr("7 message(s) in flight and none acknowledged for 30s"));
  // Never acknowledged anything at all.
  EXPECT_FALSE(
      JudgeHealth(In(true, "", 1, kNow - absl::Seconds(30), std::nullopt), kNow).ok);
}

TEST(HealthTest, AStallNamesLibrdkafkasLatestErrorSinceTheLastAcknowledgement) {
  HealthInputs in = In(true, "", 4, kNow - absl::Seconds(40), kNow - absl::Seconds(40));
  in.kafka_error = "_TIMED_OUT: 1 request(s) timed out: disconnect";
  in.kafka_error_at = kNow - absl::Seconds(8);
  HealthVerdict v = JudgeHealth(in, kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason,
            "4 message(s) in flight and none acknowledged for 30s; librdkafka reported "
            "8s ago: _TIMED_OUT: 1 request(s) timed out: disconnect");
  // An error from before the last acknowledgement is history, not the cause.
  in.kafka_error_at = kNow - absl::Seconds(50);
  EXPECT_THAT(JudgeHealth(in, kNow).reason,
              ::testing::EndsWith(": check the Kafka brokers and the stats log line"));
  // Nothing is named while acknowledgements flow.
  in.last_ack = kNow - absl::Seconds(1);
  in.kafka_error_at = kNow - absl::Seconds(2);
  EXPECT_TRUE(JudgeHealth(in, kNow).ok);
}

TEST(HealthTest, RecentAcknowledgementsOrYoungWorkAreHealthy) {
  // A busy publisher: the oldest waits long, but acknowledgements keep coming.
  EXPECT_TRUE(
      JudgeHealth(In(true, "", 9, kNow - absl::Minutes(2), kNow - absl::Seconds(1)), kNow)
          .ok);
  // Work that arrived after a quiet hour: the last acknowledgement is old.
  EXPECT_TRUE(
      JudgeHealth(In(true, "", 3, kNow - absl::Seconds(29), kNow - absl::Hours(1)), kNow)
          .ok);
}

TEST(HealthTest, ASilentReplicationConnectionIsUnhealthyOnceItPassesTheTimeout) {
  HealthInputs in = In(true, "", 0, std::nullopt, std::nullopt);
  in.replication_timeout = absl::Seconds(60);
  in.last_heard = kNow - absl::Seconds(59);
  EXPECT_TRUE(JudgeHealth(in, kNow).ok);
  in.last_heard = kNow - absl::Seconds(61);
  HealthVerdict v = JudgeHealth(in, kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.reason, HasSubstr("silent for 1m1s (--replication-timeout 1m)"));
}

TEST(ReadinessTest, TheActiveOneIsReadyAsHealthzJudgesIt) {
  HealthInputs in = In(true, "", 0, std::nullopt, std::nullopt);
  EXPECT_TRUE(JudgeReadiness(in, StandbyInputs{}, kNow).ok);
  HealthInputs stalled = In(true, "", 5, kNow - absl::Seconds(31), kNow - absl::Seconds(40));
  HealthVerdict v = JudgeReadiness(stalled, StandbyInputs{}, kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, JudgeHealth(stalled, kNow).reason);
}

TEST(ReadinessTest, AStandbyThatLookedLatelyAndFoundNothingWrongIsReady) {
  HealthInputs in = In(false, "standing by: another publisher holds the slot", 0,
                       std::nullopt, std::nullopt);
  HealthVerdict v = JudgeReadiness(in, {true, "", kNow - absl::Seconds(2)}, kNow);
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.reason, "standing by: another publisher holds the slot; ready to take over");
  EXPECT_FALSE(JudgeHealth(in, kNow).ok) << "/healthz still says: not the active one";
}

TEST(ReadinessTest, AStandbyWithAProblemOrAStaleLookIsNotReady) {
  HealthInputs in = In(false, "standing by: another publisher holds the slot", 0,
                       std::nullopt, std::nullopt);
  HealthVerdict v = JudgeReadiness(in, {true, "the Kafka brokers do not answer", kNow}, kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, "standing by, but could not take over: the Kafka brokers do not answer");
  v = JudgeReadiness(in, {true, "", kNow - kStandbyStale}, kNow);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, "standing by, but the slot was last looked at 1m ago");
  EXPECT_TRUE(JudgeReadiness(in, {true, "", kNow - kStandbyStale + absl::Seconds(1)}, kNow).ok);
}

TEST(ReadinessTest, StartingReconnectingOrRewindingIsNotReady) {
  for (const char* reason : {"starting", "cannot reach PostgreSQL: refused",
                             "rewinding to the slot"}) {
    HealthVerdict v =
        JudgeReadiness(In(false, reason, 0, std::nullopt, std::nullopt), {}, kNow);
    EXPECT_FALSE(v.ok) << reason;
    EXPECT_EQ(v.reason, absl::StrCat("not streaming: ", reason));
  }
}

}  // namespace
}  // namespace publisher

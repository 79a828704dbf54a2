#include "common/kafka_error_cause.h"

#include "gtest/gtest.h"

namespace common {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);
constexpr char kRefused[] = "_TRANSPORT: Connect failed: Connection refused";
constexpr char kAllDown[] = "_ALL_BROKERS_DOWN: 3/3 brokers are down";

TEST(KafkaErrorCauseTest, StartsWithNone) {
  KafkaErrorCause c;
  EXPECT_EQ(c.error(), "");
  EXPECT_EQ(c.at(), absl::InfinitePast());
}

TEST(KafkaErrorCauseTest, ASummaryDoesNotHideTheCause) {
  KafkaErrorCause c;
  c.Report(kRefused, kT0, /*summary=*/false);
  c.Report(kAllDown, kT0 + absl::Seconds(1), /*summary=*/true);
  c.Report(kAllDown, kT0 + absl::Seconds(2), /*summary=*/true);
  EXPECT_EQ(c.error(), kRefused);
  EXPECT_EQ(c.at(), kT0);
}

TEST(KafkaErrorCauseTest, ASummaryIsKeptUntilACauseArrives) {
  KafkaErrorCause c;
  c.Report(kAllDown, kT0, /*summary=*/true);
  EXPECT_EQ(c.error(), kAllDown);
  c.Report(kAllDown, kT0 + absl::Seconds(1), /*summary=*/true);
  EXPECT_EQ(c.at(), kT0 + absl::Seconds(1));
  c.Report("_AUTHENTICATION: SASL authentication error", kT0 + absl::Seconds(2), false);
  EXPECT_EQ(c.error(), "_AUTHENTICATION: SASL authentication error");
}

TEST(KafkaErrorCauseTest, ALaterCauseReplacesAnEarlierOne) {
  KafkaErrorCause c;
  c.Report(kRefused, kT0, false);
  c.Report("_TIMED_OUT: 1 request(s) timed out", kT0 + absl::Seconds(1), false);
  EXPECT_EQ(c.error(), "_TIMED_OUT: 1 request(s) timed out");
}

TEST(KafkaErrorCauseTest, ACauseOfAnEarlierEpisodeGivesWayToASummary) {
  KafkaErrorCause c;
  c.Report(kRefused, kT0, false);
  // Acknowledgements resumed at kT0 + 5s: the refusal was another stall's cause.
  c.Report(kAllDown, kT0 + absl::Seconds(9), true, /*stale_at=*/kT0 + absl::Seconds(5));
  EXPECT_EQ(c.error(), kAllDown);
  // A cause at the very moment the episode ended is stale too.
  KafkaErrorCause d;
  d.Report(kRefused, kT0, false);
  d.Report(kAllDown, kT0 + absl::Seconds(1), true, /*stale_at=*/kT0);
  EXPECT_EQ(d.error(), kAllDown);
}

}  // namespace
}  // namespace common

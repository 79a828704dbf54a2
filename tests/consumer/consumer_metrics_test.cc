#include "consumer/consumer_metrics.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/harness/metrics_text.h"

namespace consumer {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1700000000);

std::string Sample(const std::string& text, const std::string& series) {
  return harness::SampleValue(text, series).value_or("<absent>");
}

TEST(ConsumerMetricsTest, RendersTheLastPublishedCounters) {
  ConsumerMetrics m;
  ConsumerStats s;
  s.applied = 7;
  s.duplicates = 2;
  s.retries = 3;
  s.dead_lettered = 1;
  s.dropped = 4;
  s.pruned = 5;
  m.Publish(s, 2, kNow);
  std::string t = m.RenderPrometheus(kNow + absl::Seconds(1));
  EXPECT_EQ(Sample(t, "outbox_consumer_up"), "1");
  EXPECT_EQ(Sample(t, "outbox_consumer_applied_total"), "7");
  EXPECT_EQ(Sample(t, "outbox_consumer_duplicates_total"), "2");
  EXPECT_EQ(Sample(t, "outbox_consumer_retries_total"), "3");
  EXPECT_EQ(Sample(t, "outbox_consumer_dead_lettered_total"), "1");
  EXPECT_EQ(Sample(t, "outbox_consumer_dropped_total"), "4");
  EXPECT_EQ(Sample(t, "outbox_consumer_pruned_total"), "5");
  EXPECT_EQ(Sample(t, "outbox_consumer_held_records"), "2");
  EXPECT_THAT(t, HasSubstr("# TYPE outbox_consumer_applied_total counter\n"));
  for (absl::string_view line : absl::StrSplit(t, '\n')) {
    if (absl::StartsWith(line, "# TYPE ") && absl::EndsWith(line, " counter")) {
      EXPECT_THAT(std::string(line), HasSubstr("_total counter")) << line;
    }
  }
}

TEST(ConsumerMetricsTest, UnhealthyBeforeTheFirstStepAndWhenAStepHangs) {
  ConsumerMetrics m;
  EXPECT_THAT(m.UnhealthyReason(kNow), HasSubstr("starting"));
  EXPECT_EQ(Sample(m.RenderPrometheus(kNow), "outbox_consumer_up"), "0");
  m.Publish(ConsumerStats{}, 0, kNow);
  EXPECT_EQ(m.UnhealthyReason(kNow + ConsumerMetrics::kStuckAfter), "");
  std::string stuck = m.UnhealthyReason(kNow + ConsumerMetrics::kStuckAfter +
                                        absl::Seconds(5));
  EXPECT_THAT(stuck, HasSubstr("has not finished a step for 35s"));
  EXPECT_EQ(Sample(m.RenderPrometheus(kNow + absl::Minutes(1)), "outbox_consumer_up"),
            "0");
}

}  // namespace
}  // namespace consumer

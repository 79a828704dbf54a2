#include "publisher/operations/metrics.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/harness/metrics_text.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// The value of the sample line that starts with `series` ("name{labels}").
std::string Sample(const std::string& text, const std::string& series) {
  return harness::SampleValue(text, series).value_or("<absent>");
}

TEST(LatencyHistogramTest, CountsIntoTheFirstBucketThatHoldsTheValue) {
  LatencyHistogram h;
  h.Observe(absl::Microseconds(500));  // <= 1 ms
  h.Observe(absl::Milliseconds(1));    // <= 1 ms (upper bounds are inclusive)
  h.Observe(absl::Milliseconds(7));    // <= 10 ms
  h.Observe(absl::Minutes(5));         // above every bound
  h.Observe(-absl::Seconds(1));        // clock skew: counted as 0
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(h.counts()[0], 3u);
  EXPECT_EQ(h.counts()[3], 1u);
  EXPECT_EQ(h.counts().back(), 1u);
  EXPECT_NEAR(h.sum_seconds(), 300.0085, 1e-9);
}

TEST(MetricsTest, RendersEveryFamilyWithThePrefixAndTypes) {
  Metrics m(Metrics::Labels{{"version", "1.2.3"}, {"librdkafka", "2.0.2"}});
  RelaySnapshot r;
  r.streaming = true;
  r.stats.rows_seen = 12;
  r.stats.published = 11;
  r.stats.acknowledged = 10;
  r.stats.dead_lettered = 1;
  r.stats.transactions = 4;
  r.stats.rewinds = 2;
  r.stats.errors_by_kind[static_cast<int>(ErrorKind::kMapping)] = 3;
  r.in_flight_messages = 1;
  r.in_flight_bytes = 120;
  r.stats.confirmed = cdc::Lsn(1000);
  r.stats.server_wal_end = cdc::Lsn(1500);
  r.oldest_unacked = kNow - absl::Milliseconds(2500);
  r.stats.last_ack = kNow;
  r.stats.commit_to_ack.Observe(absl::Milliseconds(3));
  m.PublishRelay(r);
  m.CountReconnect();
  m.SetSlotRetainedBytes(4096);
  m.SetMaxRetainedWal(8192);
  std::string t = m.RenderPrometheus(kNow);

  EXPECT_EQ(
      Sample(t, "outbox_publisher_build_info{version=\"1.2.3\",librdkafka=\"2.0.2\"}"),
      "1");
  EXPECT_EQ(Sample(t, "outbox_publisher_streaming"), "1");
  EXPECT_EQ(Sample(t, "outbox_publisher_up"), "1");
  EXPECT_EQ(Sample(t, "outbox_publisher_rows_seen_total"), "12");
  EXPECT_EQ(Sample(t, "outbox_publisher_published_total"), "11");
  EXPECT_EQ(Sample(t, "outbox_publisher_acknowledged_total"), "10");
  EXPECT_EQ(Sample(t, "outbox_publisher_dead_lettered_total"), "1");
  EXPECT_EQ(Sample(t, "outbox_publisher_transactions_total"), "4");
  EXPECT_EQ(Sample(t, "outbox_publisher_rewinds_total"), "2");
  EXPECT_EQ(Sample(t, "outbox_publisher_reconnects_total"), "1");
  EXPECT_EQ(Sample(t, "outbox_publisher_errors_total{kind=\"mapping\"}"), "3");
  EXPECT_EQ(Sample(t, "outbox_publisher_errors_total{kind=\"delivery\"}"), "0");
  EXPECT_EQ(Sample(t, "outbox_publisher_errors_total{kind=\"dead_letter\"}"), "0");
  EXPECT_EQ(Sample(t, "outbox_publisher_in_flight_messages"), "1");
  EXPECT_EQ(Sample(t, "outbox_publisher_in_flight_bytes"), "120");
  EXPECT_EQ(Sample(t, "outbox_publisher_confirmed_lsn"), "1000");
  EXPECT_EQ(Sample(t, "outbox_publisher_server_wal_end_lsn"), "1500");
  EXPECT_EQ(Sample(t, "outbox_publisher_lag_bytes"), "500");
  EXPECT_EQ(Sample(t, "outbox_publisher_oldest_unacked_age_seconds"), "2.5");
  EXPECT_EQ(Sample(t, "outbox_publisher_slot_retained_wal_bytes"), "4096");
  EXPECT_EQ(Sample(t, "outbox_publisher_max_retained_wal_bytes"), "8192");
  EXPECT_EQ(Sample(t, "outbox_publisher_commit_to_ack_seconds_bucket{le=\"0.001\"}"),
            "0");
  EXPECT_EQ(Sample(t, "outbox_publisher_commit_to_ack_seconds_bucket{le=\"0.005\"}"),
            "1");
  EXPECT_EQ(Sample(t, "outbox_publisher_commit_to_ack_seconds_bucket{le=\"+Inf\"}"), "1");
  EXPECT_EQ(Sample(t, "outbox_publisher_commit_to_ack_seconds_count"), "1");
  EXPECT_THAT(t, HasSubstr("# TYPE outbox_publisher_acknowledged_total counter\n"));
  EXPECT_THAT(t, HasSubstr("# TYPE outbox_publisher_lag_bytes gauge\n"));
  EXPECT_THAT(t, HasSubstr("# TYPE outbox_publisher_commit_to_ack_seconds histogram\n"));
  // Every counter ends in _total.
  for (absl::string_view line : absl::StrSplit(t, '\n')) {
    if (absl::StartsWith(line, "# TYPE ") && absl::EndsWith(line, " counter")) {
      EXPECT_THAT(std::string(line), HasSubstr("_total counter")) << line;
    }
  }
}

TEST(MetricsTest, EverySampleCarriesTheSlotAndTheShard) {
  Metrics m({{"version", "1"}}, {{"slot", "orders_2_of_4"}, {"shard", "2/4"}});
  std::string t = m.RenderPrometheus(kNow);
  int samples = 0;
  for (absl::string_view line : absl::StrSplit(t, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    ++samples;
    EXPECT_THAT(std::string(line), HasSubstr("{slot=\"orders_2_of_4\",shard=\"2/4\""));
  }
  EXPECT_GT(samples, 30);
  EXPECT_EQ(Sample(t, "outbox_publisher_errors_total{slot=\"orders_2_of_4\",shard=\"2/4\","
                      "kind=\"mapping\"}"),
            "0");
  EXPECT_EQ(Sample(t, "outbox_publisher_build_info{slot=\"orders_2_of_4\",shard=\"2/4\","
                      "version=\"1\"}"),
            "1");
}

TEST(MetricsTest, LagSecondsIsTheOldestWaitingCommitsAgeAndZeroWhenNothingWaits) {
  Metrics m;
  RelaySnapshot r;
  r.streaming = true;
  m.PublishRelay(r);
  EXPECT_EQ(Sample(m.RenderPrometheus(kNow), "outbox_publisher_lag_seconds"), "0");
  // An hour later, still nothing pending: an idle outbox has no lag.
  EXPECT_EQ(Sample(m.RenderPrometheus(kNow + absl::Hours(1)), "outbox_publisher_lag_seconds"),
            "0");
  r.oldest_pending_commit = kNow - absl::Milliseconds(1500);
  m.PublishRelay(r);
  EXPECT_EQ(Sample(m.RenderPrometheus(kNow), "outbox_publisher_lag_seconds"), "1.5");
  // A server clock ahead of this host's: never negative.
  r.oldest_pending_commit = kNow + absl::Seconds(3);
  m.PublishRelay(r);
  EXPECT_EQ(Sample(m.RenderPrometheus(kNow), "outbox_publisher_lag_seconds"), "0");
}

TEST(MetricsTest, UnknownRetainedWalIsLeftOutAndLabelsAreEscaped) {
  Metrics m(std::vector<std::pair<std::string, std::string>>{{"v", "a\"b\\c"}});
  std::string t = m.RenderPrometheus(kNow);
  EXPECT_THAT(t, Not(HasSubstr("slot_retained_wal_bytes")));
  EXPECT_THAT(t, HasSubstr("build_info{v=\"a\\\"b\\\\c\"} 1"));
  EXPECT_EQ(Sample(t, "outbox_publisher_up"), "0");
}

TEST(MetricsTest, HealthReportsTheSupervisorsReasonUntilARunStreams) {
  Metrics m;
  EXPECT_EQ(m.Health(kNow).reason, "not streaming: starting");
  m.SetNotStreamingReason("reconnecting to PostgreSQL");
  EXPECT_EQ(m.Health(kNow).reason, "not streaming: reconnecting to PostgreSQL");
  RelaySnapshot r;
  r.streaming = true;
  m.PublishRelay(r);
  EXPECT_TRUE(m.Health(kNow).ok);
  r.streaming = false;
  m.PublishRelay(r);
  EXPECT_EQ(m.Health(kNow).reason, "not streaming");
}

// librdkafka 2.14 says "all brokers are down" every second while they are: the
// cause reported before it (the connection refused) is what /healthz names.
TEST(MetricsTest, ASummaryErrorDoesNotHideTheCauseOfTheStall) {
  Metrics m;
  RelaySnapshot r;
  r.streaming = true;
  r.in_flight_messages = 1;
  r.oldest_unacked = kNow - absl::Seconds(40);
  r.stats.last_ack = kNow - absl::Seconds(45);
  m.PublishRelay(r);
  m.ReportKafkaError("_TRANSPORT: Connect failed: Connection refused",
                     kNow - absl::Seconds(20));
  m.ReportKafkaError("_ALL_BROKERS_DOWN: 2/2 brokers are down", kNow - absl::Seconds(1),
                     /*summary=*/true);
  EXPECT_THAT(m.Health(kNow).reason, HasSubstr("Connection refused"));
  EXPECT_THAT(m.Health(kNow).reason, Not(HasSubstr("brokers are down")));
  // A cause from before the last acknowledgement is another stall's: the summary
  // is all there is to say about this one.
  r.stats.last_ack = kNow - absl::Seconds(10);
  r.oldest_unacked = kNow - absl::Seconds(40);
  m.PublishRelay(r);
  m.ReportKafkaError("_ALL_BROKERS_DOWN: 2/2 brokers are down", kNow - absl::Seconds(1),
                     /*summary=*/true);
  // And a new cause replaces a summary.
  EXPECT_THAT(m.Health(kNow + absl::Seconds(40)).reason, HasSubstr("brokers are down"));
  m.ReportKafkaError("_TRANSPORT: Connect failed: Connection refused", kNow);
  EXPECT_THAT(m.Health(kNow + absl::Seconds(40)).reason, HasSubstr("Connection refused"));
}

}  // namespace
}  // namespace publisher

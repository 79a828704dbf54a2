#include "tools/chaos/soak_audit.h"

#include "gtest/gtest.h"

namespace chaos {
namespace {

const absl::Time t0 = absl::FromUnixSeconds(1000000);
absl::Time At(double s) { return t0 + absl::Seconds(s); }

TEST(RecoveryByKindTest, FromTheFaultsEndToTheFirstNewEventDelivered) {
  // Events 0-3 commit at 0, 1, 2, 3 s; 0 and 1 arrive at once, 2 and 3 late.
  std::vector<absl::Time> committed = {At(0), At(1), At(2), At(3)};
  std::vector<absl::Time> delivered = {At(0.1), At(1.1), At(9), At(8)};
  std::vector<int> shard = {0, 0, 0, 0};
  // A kill at 1.5 s (over at 1.6 s): the first event committed after it, 2, and the
  // later 3 arrive at 9 and 8 s: 8 - 1.6 = 6.4 s.
  // A latency fault from 0.5 to 1.2 s: event 1 (committed at 1) arrived at 1.1,
  // before its end: the flow never stopped, 0.
  auto r = RecoveryByKind({{"kill-9", At(1.5), At(1.6), 0, "publisher"},
                           {"pg-latency", At(0.5), At(1.2), -1, "postgres"}},
                          committed, delivered, shard);
  ASSERT_EQ(r.count("kill-9"), 1u);
  EXPECT_EQ(r["kill-9"].all.max, absl::Milliseconds(6400));
  EXPECT_EQ(r["pg-latency"].all.max, absl::ZeroDuration());
}

TEST(RecoveryByKindTest, AShardsFaultCountsOnlyItsShardsEvents) {
  // Shard 1 keeps flowing while shard 0's publisher is down.
  std::vector<absl::Time> committed = {At(2), At(2.5), At(3)};
  std::vector<absl::Time> delivered = {At(10), At(2.6), At(11)};
  std::vector<int> shard = {0, 1, 0};
  auto r = RecoveryByKind({{"kill-9", At(1), At(1), 0, "publisher"},
                           {"broker-kill", At(1), At(1), -1, "kafka"}},
                          committed, delivered, shard);
  EXPECT_EQ(r["kill-9"].all.max, absl::Seconds(9));
  EXPECT_EQ(r["broker-kill"].all.max, absl::Milliseconds(1600)) << "any shard's delivery";
}

TEST(RecoveryByKindTest, UnseenCommitsAndUndeliveredEventsAreSkipped) {
  std::vector<absl::Time> committed = {At(1), absl::InfinitePast(), At(3)};
  std::vector<absl::Time> delivered = {At(1.5), At(2), absl::InfiniteFuture()};
  auto r = RecoveryByKind({{"kill-9", At(2.5), At(2.5), 0, "publisher"},
                           {"sigterm", At(9), At(9), 0, "publisher"}},
                          committed, delivered, {0, 0, 0});
  EXPECT_EQ(r.count("kill-9"), 0u) << "event 2 never arrived";
  EXPECT_EQ(r.count("sigterm"), 0u) << "nothing committed after it";
}

TEST(RecoveryByKindTest, ARecoveryDuringAnotherLanesFaultIsNotTheFaultsAlone) {
  std::vector<absl::Time> committed = {At(2), At(20)};
  std::vector<absl::Time> delivered = {At(15), At(21)};
  // The reset at 1 s looks like 14 s to recover, but a Kafka outage from 3 to 14 s
  // was under way; the kill at 19 s recovered alone in 2 s.
  auto r = RecoveryByKind({{"kafka-reset", At(1), At(1), -1, "kafka"},
                           {"pg-outage", At(3), At(14), -1, "postgres"},
                           {"kill-9", At(19), At(19), 0, "publisher"}},
                          committed, delivered, {0, 0});
  EXPECT_EQ(r["kafka-reset"].all.max, absl::Seconds(14));
  EXPECT_EQ(r["kafka-reset"].alone.n, 0);
  EXPECT_EQ(r["kill-9"].alone.max, absl::Seconds(2));
  EXPECT_EQ(r["kill-9"].alone.n, 1);
}

TEST(SpreadOfTest, MedianP99AndMax) {
  std::vector<absl::Duration> v;
  for (int i = 1; i <= 100; ++i) v.push_back(absl::Seconds(i));
  Spread s = SpreadOf(v);
  EXPECT_EQ(s.n, 100);
  EXPECT_EQ(s.p50, absl::Seconds(51));
  EXPECT_EQ(s.p99, absl::Seconds(99));
  EXPECT_EQ(s.max, absl::Seconds(100));
}

std::vector<UsageSample> Steady(int seconds, int64_t rss_kb, int threads, int fds,
                                int64_t rss_growth_kb_per_s = 0) {
  std::vector<UsageSample> v;
  for (int i = 0; i < seconds; ++i)
    v.push_back({At(i), rss_kb + rss_growth_kb_per_s * i, threads, fds});
  return v;
}

TEST(TrendOfTest, AFlatProcessIsFlat) {
  ResourceTrend t =
      TrendOf(Steady(3600, 40000, 12, 20), absl::Minutes(5), absl::Minutes(10));
  EXPECT_TRUE(t.flat) << t.why;
  EXPECT_EQ(t.first.rss_kb_median, 40000);
  EXPECT_EQ(t.last.rss_kb_median, 40000);
}

TEST(TrendOfTest, GrowingMemoryThreadsOrDescriptorsAreNot) {
  // 10 KiB a second: 36 MiB an hour.
  ResourceTrend rss =
      TrendOf(Steady(3600, 40000, 12, 20, 10), absl::Minutes(5), absl::Minutes(10));
  EXPECT_FALSE(rss.flat);
  EXPECT_NE(rss.why.find("RSS grew"), std::string::npos) << rss.why;
  std::vector<UsageSample> fds = Steady(3600, 40000, 12, 20);
  for (size_t i = 3000; i < fds.size(); ++i) fds[i].fds = 40;
  ResourceTrend leak = TrendOf(fds, absl::Minutes(5), absl::Minutes(10));
  EXPECT_FALSE(leak.flat);
  EXPECT_NE(leak.why.find("descriptors"), std::string::npos) << leak.why;
}

TEST(TrendOfTest, TheWarmUpIsLeftOutAndAShortRunHasThirds) {
  // Big at the start (warm-up), then flat: flat. A 30-minute run with a 10-minute
  // window judges its first and last third after the warm-up.
  std::vector<UsageSample> v = Steady(1800, 40000, 12, 20);
  for (size_t i = 0; i < 120; ++i) v[i].rss_kb = 10000;
  ResourceTrend t = TrendOf(v, absl::Minutes(3), absl::Minutes(20));
  EXPECT_TRUE(t.flat) << t.why;
  EXPECT_EQ(t.first.samples, 540) << "a third of the 1619 s after the warm-up";
}

TEST(HealthAroundTest, UnhealthyDuringAnOutageAndHealthyAfter) {
  std::vector<HealthPoint> health;
  for (int i = 0; i < 100; ++i) health.push_back({At(i), i >= 40 && i < 75 ? 503 : 200});
  auto h = HealthAround({{"kafka-outage", At(10), At(70), -1, "kafka"},
                         {"pg-outage", At(80), At(90), -1, "postgres"}},
                        health);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_TRUE(h[0].unhealthy_during);
  EXPECT_TRUE(h[0].healthy_again);
  EXPECT_EQ(h[0].healthy_after, absl::Seconds(5));
  EXPECT_FALSE(h[1].unhealthy_during) << "no 503 while it lasted";
}

}  // namespace
}  // namespace chaos

#include "common/backoff.h"

#include "gtest/gtest.h"

namespace common {
namespace {

TEST(BackoffTest, DoublesUpToTheCapWithJitterInTheUpperHalf) {
  Backoff b(absl::Milliseconds(100), absl::Seconds(2), /*seed=*/7);
  absl::Duration bases[] = {absl::Milliseconds(100),  absl::Milliseconds(200),
                            absl::Milliseconds(400),  absl::Milliseconds(800),
                            absl::Milliseconds(1600), absl::Seconds(2),
                            absl::Seconds(2)};
  for (absl::Duration base : bases) {
    absl::Duration d = b.Next();
    EXPECT_GE(d, base / 2);
    EXPECT_LE(d, base);
  }
  EXPECT_EQ(b.attempts(), 7);
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff b(absl::Milliseconds(100), absl::Seconds(10), 1);
  for (int i = 0; i < 5; ++i) b.Next();
  b.Reset();
  EXPECT_LE(b.Next(), absl::Milliseconds(100));
}

TEST(BackoffTest, JitterSpreadsWaits) {
  Backoff a(absl::Seconds(1), absl::Seconds(1), 1),
      b(absl::Seconds(1), absl::Seconds(1), 2);
  EXPECT_NE(a.Next(), b.Next());
}

}  // namespace
}  // namespace common

// SilenceWatch: silence is measured only while the relay listens.
#include "publisher/relay/silence_watch.h"

#include "gtest/gtest.h"

namespace publisher {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

TEST(SilenceWatchTest, ExpiresAfterTheTimeoutWithoutAWord) {
  SilenceWatch w(absl::Seconds(60));
  w.Start(kT0);
  EXPECT_FALSE(w.Expired(kT0 + absl::Seconds(59)));
  EXPECT_TRUE(w.Expired(kT0 + absl::Seconds(60)));
  EXPECT_EQ(w.silent(kT0 + absl::Seconds(61)), absl::Seconds(61));
}

TEST(SilenceWatchTest, AnyMessageRestartsTheClock) {
  SilenceWatch w(absl::Seconds(60));
  w.Start(kT0);
  w.Heard(kT0 + absl::Seconds(50));
  EXPECT_FALSE(w.Expired(kT0 + absl::Seconds(100)));
  EXPECT_TRUE(w.Expired(kT0 + absl::Seconds(110)));
}

TEST(SilenceWatchTest, APauseIsNotSilence) {
  SilenceWatch w(absl::Seconds(60));
  w.Start(kT0);
  // Not reading for two minutes (in-flight limits reached): messages wait unread.
  w.Pause(kT0 + absl::Seconds(120));
  EXPECT_FALSE(w.Expired(kT0 + absl::Seconds(121)));
  EXPECT_TRUE(w.Expired(kT0 + absl::Seconds(180)));
}

TEST(SilenceWatchTest, ZeroTimeoutNeverExpires) {
  SilenceWatch w;
  w.Start(kT0);
  EXPECT_FALSE(w.Expired(kT0 + absl::Hours(24)));
}

}  // namespace
}  // namespace publisher

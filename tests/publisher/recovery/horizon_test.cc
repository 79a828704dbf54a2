// PublishedHorizon: a horizon is recorded only once the relay confirmed past its
// WAL position in the same session, and only when something was published.
#include "publisher/recovery/horizon.h"

#include "gtest/gtest.h"

namespace publisher {
namespace {

using cdc::Lsn;

TEST(PublishedHorizonTest, RecordedOnlyOnceConfirmedPastTheCandidatesPosition) {
  PublishedHorizon h;
  EXPECT_TRUE(h.wants_candidate());
  h.Offer(100, Lsn(0x5000), {1, Lsn(0x4000), 10});
  EXPECT_FALSE(h.wants_candidate());
  // Below the position: a transaction below xid 100 may be unacknowledged.
  EXPECT_EQ(h.Due({1, Lsn(0x4FFF), 12}), std::nullopt);
  EXPECT_EQ(h.Due({1, Lsn(0x5000), 12}), 100u);
  h.Recorded();
  EXPECT_TRUE(h.wants_candidate());
}

TEST(PublishedHorizonTest, ACandidateOfAnotherSessionIsDropped) {
  PublishedHorizon h;
  h.Offer(100, Lsn(0x5000), {1, Lsn(0x4000), 10});
  // A reconnect (a failover: another server's WAL) confirms a higher position.
  EXPECT_EQ(h.Due({2, Lsn(0x9000), 12}), std::nullopt);
  EXPECT_TRUE(h.wants_candidate());
}

TEST(PublishedHorizonTest, AnIdlePublisherWritesNothingAfterItsFirstRecord) {
  PublishedHorizon h;
  h.Offer(100, Lsn(0x5000), {1, Lsn(0x4000), 10});
  ASSERT_EQ(h.Due({1, Lsn(0x5000), 10}), 100u);
  h.Recorded();
  // Its own write moved the xid and the WAL; nothing was published since.
  h.Offer(101, Lsn(0x5100), {1, Lsn(0x5000), 10});
  EXPECT_EQ(h.Due({1, Lsn(0x6000), 10}), std::nullopt);
  // Something published: the next covered candidate is recorded.
  h.Offer(150, Lsn(0x6100), {1, Lsn(0x6000), 10});
  EXPECT_EQ(h.Due({1, Lsn(0x7000), 11}), 150u);
}

TEST(PublishedHorizonTest, DropForgetsTheCandidate) {
  PublishedHorizon h;
  h.Offer(100, Lsn(0x5000), {1, Lsn(0x4000), 10});
  h.Drop();
  EXPECT_TRUE(h.wants_candidate());
  EXPECT_EQ(h.Due({1, Lsn(0x9000), 12}), std::nullopt);
}

}  // namespace
}  // namespace publisher

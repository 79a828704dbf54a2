// Exactly-once's pure parts: the checkpoint record, the skipping rule and the
// Kafka transaction batching policy.
#include "publisher/delivery/checkpoint.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/v1/checkpoint.pb.h"

namespace publisher {
namespace {

using cdc::Lsn;
using ::testing::HasSubstr;

const absl::Time kT = absl::FromUnixMicros(1'800'000'000'123'456);

TEST(CheckpointTest, RoundTripsThroughTheRecordValue) {
  Checkpoint c{Lsn(0x16B3F28), 731, kT, "7301234567890123456", 3};
  std::string value = EncodeCheckpoint(c, "outbox-publisher.slot", kT + absl::Seconds(1));
  absl::StatusOr<Checkpoint> back = DecodeCheckpoint(value, "outbox-publisher.slot");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, c);
  outbox::v1::Checkpoint m;
  ASSERT_TRUE(m.ParseFromString(value));
  EXPECT_EQ(m.end_lsn(), 0x16B3F28u);
  EXPECT_EQ(m.transactional_id(), "outbox-publisher.slot");
  EXPECT_EQ(m.written_at().seconds(), 1'800'000'001);
  EXPECT_EQ(m.commit_time().nanos(), 123'456'000);
  EXPECT_EQ(m.system_identifier(), "7301234567890123456");
  EXPECT_EQ(m.timeline(), 3u);
}

// A promotion: timeline 1 ended at 0/5000000, where 2 began. The publisher had
// published up to 0/5000100 on the old primary, past what the standby received.
TEST(OnTimelineTest, ACheckpointOfAnEarlierTimelineSkipsOnlyBelowItsSwitchPoint) {
  std::vector<cdc::TimelineSwitch> history = {{1, Lsn(0x5000000)}};
  Checkpoint old{Lsn(0x5000100), 9, kT, "s", 1};
  std::optional<Checkpoint> read = OnTimeline(old, 2, history);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->end_lsn, Lsn(0x5000000));
  // The new primary's first transactions past the switch point are not covered.
  CheckpointFilter filter(read);
  EXPECT_FALSE(filter.Covers(Lsn(0x5000010)));
  EXPECT_TRUE(filter.Covers(Lsn(0x4FFFFF0)));
  // Below the switch point it stands as written.
  Checkpoint early{Lsn(0x4000000), 9, kT, "s", 1};
  EXPECT_EQ(OnTimeline(early, 2, history)->end_lsn, Lsn(0x4000000));
}

TEST(OnTimelineTest, SameTimelineUnknownTimelineOrNoneStandAsWritten) {
  std::vector<cdc::TimelineSwitch> history = {{1, Lsn(0x5000000)}};
  Checkpoint same{Lsn(0x6000000), 9, kT, "s", 2};
  EXPECT_EQ(OnTimeline(same, 2, history), same);
  Checkpoint legacy{Lsn(0x6000000), 9, kT, "s", 0};
  EXPECT_EQ(OnTimeline(legacy, 2, history), legacy);
  EXPECT_EQ(OnTimeline(std::nullopt, 2, history), std::nullopt);
}

TEST(OnTimelineTest, ACheckpointOfATimelineNotInTheHistorySkipsNothing) {
  // Written on timeline 3 (another branch); this server is on 2.
  Checkpoint other{Lsn(0x6000000), 9, kT, "s", 3};
  std::optional<Checkpoint> read = OnTimeline(other, 2, {{1, Lsn(0x5000000)}});
  ASSERT_TRUE(read.has_value());
  EXPECT_FALSE(CheckpointFilter(read).Covers(Lsn(0x10)));
}

TEST(CheckSameClusterTest, OnlyACheckpointNamingAnotherClusterIsRefused) {
  EXPECT_TRUE(CheckSameCluster(std::nullopt, "73").ok()) << "nothing committed yet";
  EXPECT_TRUE(CheckSameCluster(Checkpoint{Lsn(5), 1, kT, "73"}, "73").ok());
  EXPECT_TRUE(CheckSameCluster(Checkpoint{Lsn(5), 1, kT}, "73").ok())
      << "written before checkpoints named their cluster";
  absl::Status other = CheckSameCluster(Checkpoint{Lsn(0x900), 1, kT, "71"}, "73");
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr("system identifier 71, at LSN 0/900"));
  EXPECT_THAT(other.message(), HasSubstr("(system identifier 73)"));
  EXPECT_THAT(other.message(), HasSubstr("--transactional-id"));
}

TEST(CheckpointTest, ForeignOrGarbageValuesAreDataLoss) {
  EXPECT_EQ(DecodeCheckpoint("\xff\xff\xff", "a").status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeCheckpoint("", "a").status().code(), absl::StatusCode::kDataLoss)
      << "an empty value (a tombstone) names no LSN";
  absl::StatusOr<Checkpoint> other =
      DecodeCheckpoint(EncodeCheckpoint({Lsn(5), 1, kT}, "b", kT), "a");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(other.status().message(), HasSubstr("names transactional id \"b\""));
}

TEST(LatestCheckpointTest, TheLastRecordOfTheKeyWins) {
  std::vector<CheckpointRecord> records = {
      {0, 0, "me", EncodeCheckpoint({Lsn(0x100), 1, kT}, "me", kT)},
      {0, 1, "other", EncodeCheckpoint({Lsn(0x900), 9, kT}, "other", kT)},
      {0, 2, "me", EncodeCheckpoint({Lsn(0x300), 3, kT}, "me", kT)},
      {0, 3, "other", "not even a checkpoint"},
  };
  absl::StatusOr<std::optional<Checkpoint>> c = LatestCheckpoint(records, "me");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->end_lsn, Lsn(0x300));
  // Offsets order the records, not the order they were read in.
  std::swap(records[0], records[2]);
  EXPECT_EQ((*LatestCheckpoint(records, "me"))->end_lsn, Lsn(0x300));
}

TEST(LatestCheckpointTest, NoneATombstoneOrGarbage) {
  EXPECT_FALSE(LatestCheckpoint({}, "me")->has_value());
  std::vector<CheckpointRecord> deleted = {
      {0, 0, "me", EncodeCheckpoint({Lsn(0x100), 1, kT}, "me", kT)}, {0, 1, "me", ""}};
  EXPECT_FALSE(LatestCheckpoint(deleted, "me")->has_value()) << "a tombstone starts over";
  std::vector<CheckpointRecord> garbage = {{0, 0, "me", "\x08"}};
  EXPECT_EQ(LatestCheckpoint(garbage, "me").status().code(), absl::StatusCode::kDataLoss);
}

// Transactions in commit order: T1 commits at 0x100 and ends at 0x130; T2 commits at
// 0x130 (it may start where T1 ended) and ends at 0x160; T3 at 0x200..0x230.
TEST(CheckpointFilterTest, CoversExactlyTheTransactionsUpToTheCheckpointsEnd) {
  CheckpointFilter f(Checkpoint{Lsn(0x160), 2, kT});  // T2 was the last published.
  EXPECT_TRUE(f.Covers(Lsn(0x100)));                  // T1
  EXPECT_TRUE(f.Covers(Lsn(0x130)));                  // T2: final_lsn < end_lsn
  EXPECT_FALSE(f.Covers(Lsn(0x160)))                  // a commit at the end LSN is next
      << "equal LSN: a transaction committing where the checkpoint ends is new";
  EXPECT_FALSE(f.Covers(Lsn(0x200)));  // T3
}

TEST(CheckpointFilterTest, NoCheckpointCoversNothing) {
  CheckpointFilter f;
  EXPECT_FALSE(f.Covers(Lsn(0)));
  EXPECT_FALSE(f.Covers(Lsn(1)));
}

TEST(CheckpointFilterTest, ARewindFarBelowTheCheckpointSkipsEverythingItCovers) {
  // PostgreSQL 15 set the slot back to 0x100 after a restart; the checkpoint says
  // 0x5000 was published: every transaction in between is skipped, however many.
  CheckpointFilter f(Checkpoint{Lsn(0x5000), 90, kT});
  int skipped = 0;
  for (uint64_t lsn = 0x100; lsn < 0x5000; lsn += 0x40) skipped += f.Covers(Lsn(lsn));
  EXPECT_EQ(skipped, (0x5000 - 0x100) / 0x40 + ((0x5000 - 0x100) % 0x40 != 0));
  EXPECT_FALSE(f.Covers(Lsn(0x5000)));
}

TEST(CheckpointFilterTest, CommittedCheckpointsNeverMoveBack) {
  CheckpointFilter f(Checkpoint{Lsn(0x300), 3, kT});
  f.Committed(Checkpoint{Lsn(0x200), 2, kT});
  EXPECT_EQ(f.latest()->end_lsn, Lsn(0x300));
  f.Committed(Checkpoint{Lsn(0x400), 4, kT});
  EXPECT_EQ(f.latest()->end_lsn, Lsn(0x400));
  EXPECT_TRUE(f.Covers(Lsn(0x3ff)));
}

TEST(TransactionBatchPolicyTest, CommitsAfterTheIntervalOrAtTheInFlightLimit) {
  TransactionBatchPolicy p(absl::Milliseconds(100));
  EXPECT_FALSE(p.open());
  EXPECT_FALSE(p.ShouldCommit(kT, true)) << "nothing to commit";
  EXPECT_EQ(p.deadline(), absl::InfiniteFuture());
  p.Began(kT);
  EXPECT_TRUE(p.open());
  EXPECT_FALSE(p.ShouldCommit(kT + absl::Milliseconds(99), false));
  EXPECT_TRUE(p.ShouldCommit(kT + absl::Milliseconds(100), false));
  EXPECT_TRUE(p.ShouldCommit(kT + absl::Milliseconds(1), true));
  EXPECT_EQ(p.deadline(), kT + absl::Milliseconds(100));
  p.Ended();
  EXPECT_FALSE(p.ShouldCommit(kT + absl::Hours(1), true));
}

TEST(TransactionBatchPolicyTest, CommitsWhenNoPostgreSQLTransactionEndedForAFifth) {
  TransactionBatchPolicy p(absl::Milliseconds(100));
  p.Began(kT);
  p.Boundary(kT + absl::Milliseconds(10));
  EXPECT_EQ(p.deadline(), kT + absl::Milliseconds(30));
  EXPECT_FALSE(p.ShouldCommit(kT + absl::Milliseconds(29), false));
  p.Boundary(kT + absl::Milliseconds(29));  // Still busy: the quiet gap restarts.
  EXPECT_FALSE(p.ShouldCommit(kT + absl::Milliseconds(48), false));
  EXPECT_TRUE(p.ShouldCommit(kT + absl::Milliseconds(49), false));
  // A stream never quiet for 20 ms commits at the interval.
  p.Boundary(kT + absl::Milliseconds(95));
  EXPECT_EQ(p.deadline(), kT + absl::Milliseconds(100));
  // The next Kafka transaction starts without the old boundary.
  p.Ended();
  p.Began(kT + absl::Milliseconds(200));
  EXPECT_EQ(p.deadline(), kT + absl::Milliseconds(300));
}

}  // namespace
}  // namespace publisher

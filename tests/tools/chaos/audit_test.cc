// The fault suite's verdicts must be able to fail: each check against a history
// that breaks it, and one that does not.
#include "tools/chaos/audit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaos {
namespace {

Delivered D(std::string id, int32_t partition, int64_t offset, uint64_t commit_lsn,
            uint64_t lsn = 0) {
  return {std::move(id), partition, offset, commit_lsn, lsn};
}

ConfirmationSample S(uint64_t confirmed, std::map<int32_t, int64_t> high) {
  return {absl::UnixEpoch(), confirmed, std::move(high)};
}

TEST(FirstDeliveriesTest, KeepsTheLowestOffsetOfEachId) {
  auto first = FirstDeliveries(
      {D("a", 0, 5, 100), D("a", 0, 2, 100), D("b", 1, 7, 200), D("a", 0, 9, 100)});
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first.at("a").offset, 2);
  EXPECT_EQ(first.at("b").offset, 7);
}

TEST(EarlyConfirmationTest, ConfirmationAfterTheRowWasStoredIsFine) {
  auto first = FirstDeliveries({D("a", 0, 0, 100), D("b", 1, 0, 200)});
  // Confirmed past both, and both partitions already held them.
  EXPECT_TRUE(FindEarlyConfirmations(first, {}, {S(300, {{0, 1}, {1, 1}})}).empty());
  // Confirmed past a only: b (commit 200 >= 150) may still be missing.
  EXPECT_TRUE(FindEarlyConfirmations(first, {}, {S(150, {{0, 1}, {1, 0}})}).empty());
}

TEST(EarlyConfirmationTest, ConfirmationBeforeTheRowReachedTheBrokerIsCaught) {
  // b committed at 200 and was first stored at offset 4 of partition 1, but the
  // slot was confirmed at 300 while partition 1 held only offsets 0..3: a row
  // rescued later (a PostgreSQL restart set the slot back) is still caught.
  auto first = FirstDeliveries({D("a", 0, 0, 100), D("b", 1, 4, 200), D("c", 1, 9, 400)});
  auto early = FindEarlyConfirmations(
      first, {},
      {S(250, {{0, 1}, {1, 4}}), S(300, {{0, 1}, {1, 5}}), S(500, {{0, 1}, {1, 9}})});
  ASSERT_EQ(early.size(), 2u);
  EXPECT_EQ(early[0].row.id, "b");
  EXPECT_EQ(early[0].sample.confirmed, 250u);
  EXPECT_EQ(early[1].row.id, "c");
}

TEST(EarlyConfirmationTest, ARowThatNeverArrivedIsEarlyBelowAnyConfirmationPastIt) {
  auto first = FirstDeliveries({D("a", 0, 0, 100)});
  std::vector<Missing> missing = {{"lost", 200}, {"lost-later", 400}};
  auto early = FindEarlyConfirmations(first, missing,
                                      {S(150, {{0, 1}}), S(201, {{0, 1}}), S(500, {})});
  ASSERT_EQ(early.size(), 2u);
  EXPECT_TRUE(early[0].never_delivered);
  EXPECT_EQ(early[0].row.id, "lost");
  EXPECT_EQ(early[0].sample.confirmed, 201u);
  EXPECT_EQ(early[1].sample.confirmed, 500u);
}

TEST(EarlyConfirmationTest, EqualCommitLsnIsNotBelowTheConfirmation) {
  // A transaction whose commit record starts where the confirmed one ended.
  auto first = FirstDeliveries({D("a", 0, 3, 300)});
  EXPECT_TRUE(FindEarlyConfirmations(first, {}, {S(300, {{0, 0}})}).empty());
  EXPECT_EQ(FindEarlyConfirmations(first, {}, {S(301, {{0, 3}})}).size(), 1u);
}

TEST(EarlyConfirmationTest, AStaleWatermarkOfANewLeaderIsNotAnEarlyConfirmation) {
  auto first = FirstDeliveries({D("a", 0, 5, 100)});
  // Sampled in time order: the partition held offset 5 (watermark 6), then a new
  // leader reported watermark 1 for a while.
  EXPECT_TRUE(
      FindEarlyConfirmations(first, {}, {S(50, {{0, 6}}), S(200, {{0, 1}})}).empty());
  // Without the earlier sample, the same reading is early.
  EXPECT_EQ(FindEarlyConfirmations(first, {}, {S(200, {{0, 1}})}).size(), 1u);
}

TEST(PartitionOrderTest, FirstDeliveriesMustFollowCommitOrder) {
  std::vector<std::string> examples;
  EXPECT_EQ(PartitionOrderViolations(
                FirstDeliveries({D("a", 0, 0, 100, 10), D("b", 0, 1, 100, 20),
                                 D("c", 0, 2, 200, 5), D("x", 1, 0, 50)}),
                &examples),
            0);
  // The rewind after a gap: c (commit 200) was stored, a and b were not, and came
  // again later; their duplicates do not count, their first deliveries do.
  EXPECT_EQ(
      PartitionOrderViolations(FirstDeliveries({D("c", 0, 0, 200), D("a", 0, 1, 100),
                                                D("b", 0, 2, 150), D("c", 0, 3, 200)}),
                               &examples),
      2);
  ASSERT_FALSE(examples.empty());
  EXPECT_THAT(examples[0], ::testing::HasSubstr("a (commit LSN 100)"));
}

// A row re-published from the table after a gap has no WAL position (commit LSN
// 0): it is counted, kept out of the LSN checks, and still judged per key.
TEST(RepublishedTest, RowsWithoutAWalPositionAreCountedAndKeptOutOfLsnChecks) {
  auto first = FirstDeliveries({D("a", 0, 0, 100), D("r", 0, 5, 0), D("b", 0, 6, 200)});
  EXPECT_EQ(RepublishedFirst(first), 1);
  // r, stored at offset 5 after a confirmation past LSN 150 with the watermark at 1,
  // would read as early with LSN 0; with no position it is not judged.
  EXPECT_TRUE(FindEarlyConfirmations(first, {}, {S(150, {{0, 1}})}).empty());
  EXPECT_EQ(PartitionOrderViolations(first, nullptr), 0);
  // A positioned row confirmed early beside it is still caught.
  auto early = FindEarlyConfirmations(first, {}, {S(300, {{0, 1}})});
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0].row.id, "b");
  // Per key, a re-published row out of the writer's order is still a violation.
  std::map<std::string, Committed> history = {
      {"a", {"k", 1}}, {"r", {"k", 3}}, {"b", {"k", 2}}};
  EXPECT_EQ(KeyOrderViolations(first, history, nullptr), 1);
}

// Exactly-once's duplicates are the WAL path's: a copy re-published from the table
// after a gap is not one of them; a second positioned copy is.
TEST(RepublishedTest, OnlyTheWalPathsDuplicatesCount) {
  EXPECT_EQ(PositionedDuplicates(
                {D("a", 0, 0, 100), D("a", 0, 5, 0), D("r", 0, 6, 0), D("r", 0, 7, 0)}),
            0);
  EXPECT_EQ(PositionedDuplicates({D("a", 0, 0, 100), D("a", 0, 5, 100), D("a", 0, 6, 0)}),
            1);
}

TEST(KeyOrderTest, SequenceWithinAnAggregateAndOnePartitionPerKey) {
  std::map<std::string, Committed> history = {
      {"r1", {"a1", 0}}, {"r2", {"a1", 1}}, {"r3", {"a2", 0}}, {"r4", {"a1", 2}}};
  std::vector<std::string> examples;
  EXPECT_EQ(KeyOrderViolations(FirstDeliveries({D("r1", 0, 0, 1), D("r3", 1, 0, 1),
                                                D("r2", 0, 1, 2), D("r4", 0, 2, 3)}),
                               history, &examples),
            0);
  EXPECT_EQ(KeyOrderViolations(FirstDeliveries({D("r2", 0, 0, 2), D("r1", 0, 1, 1)}),
                               history, &examples),
            1);
  EXPECT_EQ(KeyOrderViolations(FirstDeliveries({D("r1", 0, 0, 1), D("r2", 1, 0, 2)}),
                               history, &examples),
            1)
      << "a key that moved partition";
}

}  // namespace
}  // namespace chaos

// KeyShard: --shard's parsing and names, the shards' row filters, and the rules a
// shard's publication (or an unsharded one) must follow.
#include "cdc/key_shard.h"

#include "cdc/catalog_facts.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cdc {
namespace {

using ::testing::HasSubstr;

TEST(KeyShardTest, ParsesIOfN) {
  EXPECT_EQ(*ParseKeyShard("1/4"), (KeyShard{1, 4}));
  EXPECT_EQ(*ParseKeyShard("4/4"), (KeyShard{4, 4}));
  EXPECT_EQ(*ParseKeyShard("1/1"), (KeyShard{1, 1}));
  for (const char* bad : {"0/4", "5/4", "4", "1/0", "a/b", "1/65", "-1/4", "1/4/2", ""})
    EXPECT_FALSE(ParseKeyShard(bad).ok()) << bad;
  EXPECT_THAT(ParseKeyShard("5/4").status().message(), HasSubstr("such as 1/4"));
  EXPECT_EQ(KeyShardName(KeyShard{2, 4}), "2/4");
}

TEST(KeyShardTest, NamesEachShardsSlotAndPublication) {
  EXPECT_EQ(ShardedName("outbox_publisher", KeyShard{2, 4}), "outbox_publisher_2_of_4");
}

TEST(KeyShardTest, RowFiltersSplitTheHashWithoutAbsAndGiveNullKeysToShardOne) {
  EXPECT_EQ(ShardRowFilter("\"aggregate_id\"", KeyShard{1, 4}),
            "((hashtext(\"aggregate_id\"::text) % 4) + 4) % 4 = 0 OR \"aggregate_id\" IS "
            "NULL");
  EXPECT_EQ(ShardRowFilter("k", KeyShard{3, 4}), "((hashtext(k::text) % 4) + 4) % 4 = 2");
}

TEST(KeyShardTest, TheCoverageQueryShowsEachSampleToEveryFilterUnderTheKeysName) {
  std::string q = ShardCoverageQuery({"f1", "f2"}, "\"k\"", "SELECT 1");
  EXPECT_THAT(q, HasSubstr("(CASE WHEN (f1) THEN 1 ELSE 0 END) + (CASE WHEN (f2) THEN 1 "
                           "ELSE 0 END) AS hits"));
  EXPECT_THAT(q, HasSubstr("SELECT k AS \"k\" FROM (SELECT 1) AS samples(k)"));
  // No shard at all selects nothing.
  EXPECT_THAT(ShardCoverageQuery({}, "k", "SELECT 1"), HasSubstr("0 AS hits"));
}

PublicationFacts Publication(std::string filter) {
  PublicationFacts p;
  p.name = "pub";
  p.exists = true;
  p.publishes_insert = true;
  p.tables = {"public.outbox"};
  p.row_filters = {std::move(filter)};
  return p;
}

TEST(KeyShardTest, AShardsPublicationMustFilterAndAnUnshardedOneMustNot) {
  const std::vector<std::string> tables = {"public.outbox"}, quoted = {"outbox"};
  std::string mine = ShardRowFilter("aggregate_id", KeyShard{1, 2});
  EXPECT_TRUE(CheckPublication(Publication(""), "pub", tables, quoted, false).ok());
  EXPECT_TRUE(
      CheckPublication(Publication("x"), "pub", tables, quoted, false, mine).ok());
  absl::Status unsharded =
      CheckPublication(Publication("x"), "pub", tables, quoted, false);
  EXPECT_THAT(unsharded.message(), HasSubstr("would never be published"));
  EXPECT_THAT(unsharded.message(), HasSubstr("SET TABLE outbox (without WHERE)"));
  absl::Status unfiltered =
      CheckPublication(Publication(""), "pub", tables, quoted, false, mine);
  EXPECT_THAT(unfiltered.message(), HasSubstr("not only this shard's keys"));
  EXPECT_THAT(unfiltered.message(), HasSubstr(absl::StrCat("WHERE (", mine, ")")));
  EXPECT_EQ(CreatePublicationSql("pub", {"a", "b"}, "f"),
            "CREATE PUBLICATION pub FOR TABLE a WHERE (f), b WHERE (f) WITH (publish = "
            "'insert')");
}

}  // namespace
}  // namespace cdc

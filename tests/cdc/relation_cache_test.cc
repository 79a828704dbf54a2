#include "cdc/relation_cache.h"

#include "gtest/gtest.h"

namespace cdc {
namespace {

using pgoutput::Relation;
using pgoutput::Value;

Relation Outbox(std::vector<std::string> columns) {
  Relation r{std::nullopt, 16384, "public", "outbox", 'd', {}};
  for (const std::string& c : columns) r.columns.push_back({0, c, 25, -1});
  return r;
}

TEST(RelationCacheTest, UnknownOidIsDataLoss) {
  RelationCache cache;
  absl::StatusOr<const Relation*> r = cache.Find(1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("OID 1"), absl::string_view::npos);
}

TEST(RelationCacheTest, NewRelationMessageReplacesTheOldShape) {
  RelationCache cache;
  cache.Apply(Outbox({"id", "payload", "dropped_later"}));
  cache.Apply(Outbox({"id", "payload"}));  // e.g. after ALTER TABLE ... DROP COLUMN
  ASSERT_EQ(cache.size(), 1u);
  const Relation* r = *cache.Find(16384);
  ASSERT_EQ(r->columns.size(), 2u);
  EXPECT_FALSE(RelationCache::ColumnIndex(*r, "dropped_later").has_value());
  cache.Apply(Outbox({"id", "payload", "added"}));  // ALTER TABLE ... ADD COLUMN
  r = *cache.Find(16384);
  EXPECT_EQ(RelationCache::ColumnIndex(*r, "added"), 2u);
  EXPECT_EQ(RelationCache::ColumnIndex(*r, "id"), 0u);
}

TEST(RelationCacheTest, RenamedTableKeepsItsOid) {
  RelationCache cache;
  cache.Apply(Outbox({"id"}));
  Relation renamed = Outbox({"id"});
  renamed.name = "events";
  cache.Apply(renamed);
  EXPECT_EQ((*cache.Find(16384))->name, "events");
}

TEST(RelationCacheTest, ChecksTupleWidth) {
  RelationCache cache;
  cache.Apply(Outbox({"id", "payload"}));
  pgoutput::Tuple two{{Value::Kind::kText, "1"}, {Value::Kind::kNull, ""}};
  pgoutput::Tuple one{{Value::Kind::kText, "1"}};
  EXPECT_TRUE(cache.CheckTuple(16384, two).ok());
  EXPECT_EQ(cache.CheckTuple(16384, one).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(cache.CheckTuple(99, two).code(), absl::StatusCode::kDataLoss);
}

TEST(RelationCacheTest, ClearForgetsEverything) {
  RelationCache cache;
  cache.Apply(Outbox({"id"}));
  cache.Clear();
  EXPECT_FALSE(cache.Find(16384).ok());
}

}  // namespace
}  // namespace cdc

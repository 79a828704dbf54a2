#include "publisher/operations/catalog_verdicts.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

class CatalogVerdictsTest : public ::testing::Test {
 protected:
  CatalogVerdictsTest()
      : watch_("app", 1000, "\"pub\"", {"public.outbox"}, {"\"public\".\"outbox\""},
               "'slot'") {
    healthy_.slot = {"slot", true, "logical", "pgoutput",   "app", "reserved",
                     true,   42,   10,        std::nullopt, false};
    cdc::TableFacts t;
    t.schema = "public";
    t.table = "outbox";
    t.exists = true;
    healthy_.tables = {t};
    healthy_.publication = {"pub", true, true, {"public.outbox"}};
  }

  CatalogVerdicts watch_;
  CatalogFindings healthy_;
};

TEST_F(CatalogVerdictsTest, HealthyCatalogSaysNothing) {
  WatchVerdict v = watch_.Judge(healthy_);
  EXPECT_TRUE(v.fatal.ok());
  EXPECT_THAT(v.warnings, IsEmpty());
  EXPECT_THAT(v.notes, IsEmpty());
}

TEST_F(CatalogVerdictsTest, RetainedWalWarnsOncePerCrossing) {
  CatalogFindings f = healthy_;
  f.slot.retained_bytes = 1001;
  WatchVerdict first = watch_.Judge(f);
  ASSERT_EQ(first.warnings.size(), 1u);
  EXPECT_THAT(first.warnings[0], HasSubstr("retains 1001 bytes of WAL, more than "
                                           "--max-retained-wal (1000)"));
  EXPECT_TRUE(first.fatal.ok()) << "a warning, not a stop";
  f.slot.retained_bytes = 5000;
  EXPECT_THAT(watch_.Judge(f).warnings, IsEmpty()) << "warned twice for one crossing";
  f.slot.retained_bytes = 1000;
  WatchVerdict back = watch_.Judge(f);
  EXPECT_THAT(back.warnings, IsEmpty());
  ASSERT_EQ(back.notes.size(), 1u);
  EXPECT_THAT(back.notes[0], HasSubstr("within --max-retained-wal"));
  f.slot.retained_bytes = 2000;
  EXPECT_EQ(watch_.Judge(f).warnings.size(), 1u) << "a second crossing warns again";
}

TEST_F(CatalogVerdictsTest, UnreservedSlotWarnsOnce) {
  CatalogFindings f = healthy_;
  f.slot.wal_status = "unreserved";
  ASSERT_EQ(watch_.Judge(f).warnings.size(), 1u);
  EXPECT_THAT(watch_.Judge(f).warnings, IsEmpty());
}

TEST_F(CatalogVerdictsTest, LostSlotIsFatal) {
  CatalogFindings f = healthy_;
  f.slot.wal_status = "lost";
  WatchVerdict v = watch_.Judge(f);
  EXPECT_EQ(v.fatal.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(v.fatal.message(), HasSubstr("wal_status = lost"));
  EXPECT_THAT(v.fatal.message(), HasSubstr("pg_drop_replication_slot('slot')"));
}

TEST_F(CatalogVerdictsTest, DroppedTableIsFatal) {
  CatalogFindings f = healthy_;
  f.tables[0].exists = false;
  WatchVerdict v = watch_.Judge(f);
  EXPECT_EQ(v.fatal.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(v.fatal.message(), HasSubstr("outbox table public.outbox was dropped"));
}

TEST_F(CatalogVerdictsTest, DroppedOrNarrowedPublicationIsFatal) {
  CatalogFindings f = healthy_;
  f.publication.exists = false;
  EXPECT_THAT(watch_.Judge(f).fatal.message(),
              HasSubstr("publication \"pub\" does not exist"));
  f = healthy_;
  f.publication.tables.clear();
  EXPECT_THAT(watch_.Judge(f).fatal.message(),
              HasSubstr("does not include table public.outbox: ALTER PUBLICATION \"pub\" "
                        "ADD TABLE \"public\".\"outbox\""));
  f = healthy_;
  f.publication.publishes_insert = false;
  EXPECT_THAT(watch_.Judge(f).fatal.message(), HasSubstr("does not publish INSERTs"));
}

TEST_F(CatalogVerdictsTest, UnknownRetainedWalIsNotJudged) {
  CatalogFindings f = healthy_;
  f.slot.retained_bytes.reset();
  WatchVerdict v = watch_.Judge(f);
  EXPECT_TRUE(v.fatal.ok());
  EXPECT_THAT(v.warnings, IsEmpty());
}

}  // namespace
}  // namespace publisher

namespace publisher {
namespace {

// A shard's publication filters its rows (--shard); an unsharded one filters none.
TEST(CatalogVerdictsShardTest, AFilterIsAShardsAndNoOneElses) {
  CatalogFindings f;
  cdc::TableFacts t;
  t.schema = "public";
  t.table = "outbox";
  t.exists = true;
  f.tables = {t};
  f.publication = {"pub", true, true, {"public.outbox"}, {"hashtext(aggregate_id) > 0"}};
  CatalogVerdicts shard("app", 1000, "\"pub\"", {"public.outbox"},
                        {"\"public\".\"outbox\""}, "'slot'", "the shard's filter");
  EXPECT_TRUE(shard.Judge(f).fatal.ok()) << shard.Judge(f).fatal;
  CatalogVerdicts unsharded("app", 1000, "\"pub\"", {"public.outbox"},
                            {"\"public\".\"outbox\""}, "'slot'");
  EXPECT_THAT(unsharded.Judge(f).fatal.message(),
              ::testing::HasSubstr("would never be published"));
  f.publication.row_filters = {""};
  EXPECT_THAT(shard.Judge(f).fatal.message(),
              ::testing::HasSubstr("not only this shard's keys"));
}

}  // namespace
}  // namespace publisher

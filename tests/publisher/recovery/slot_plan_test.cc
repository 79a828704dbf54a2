// PlanSlot: every combination of slot, record and --on-slot-gap that matters.
#include "publisher/recovery/slot_plan.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

cdc::SlotFacts Slot(bool exists, std::string wal_status = "reserved") {
  cdc::SlotFacts f;
  f.name = "outbox_publisher";
  f.exists = exists;
  if (exists) {
    f.slot_type = "logical";
    f.plugin = "pgoutput";
    f.database = "app";
    f.wal_status = std::move(wal_status);
  }
  return f;
}

SlotRecord Record(bool recovering = false) {
  SlotRecord r;
  r.exists = true;
  r.published_below_xid = 1234;
  r.updated_at = "2026-12-06 02:00:00+00";
  r.recovering = recovering;
  return r;
}

SlotPlanInputs Inputs(OnSlotGap on_gap = OnSlotGap::kStop, bool create = true) {
  SlotPlanInputs in;
  in.literal_slot = "'outbox_publisher'";
  in.database = "app";
  in.create = create;
  in.on_gap = on_gap;
  in.state_table = "public.outbox_publisher_state";
  return in;
}

TEST(PlanSlotTest, FirstStartCreatesTheSlot) {
  auto plan = PlanSlot(Slot(false), SlotRecord{}, Inputs());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->step, SlotPlan::Step::kCreate);
  EXPECT_TRUE(plan->gap.empty());
}

TEST(PlanSlotTest, TheRecordedSlotIsStreamedFrom) {
  auto plan = PlanSlot(Slot(true), Record(), Inputs());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->step, SlotPlan::Step::kStream);
  EXPECT_FALSE(plan->adopt);
}

TEST(PlanSlotTest, ASlotFromBeforeTheRecordIsAdopted) {
  auto plan = PlanSlot(Slot(true), SlotRecord{}, Inputs());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->step, SlotPlan::Step::kStream);
  EXPECT_TRUE(plan->adopt);
  // Without a state table there is nothing to adopt into.
  SlotPlanInputs none = Inputs();
  none.state_table.clear();
  EXPECT_FALSE(PlanSlot(Slot(true), SlotRecord{}, none)->adopt);
}

TEST(PlanSlotTest, AMissingSlotThatWasPublishedFromIsAGapThatStopsByDefault) {
  auto plan = PlanSlot(Slot(false), Record(), Inputs());
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(cdc::IsSlotGap(plan.status()));
  EXPECT_THAT(plan.status().message(), HasSubstr("is gone"));
  EXPECT_THAT(plan.status().message(), HasSubstr("public.outbox_publisher_state"));
  EXPECT_THAT(plan.status().message(), HasSubstr("--on-slot-gap=republish"));
  EXPECT_THAT(plan.status().message(), HasSubstr("--on-slot-gap=skip"));
  EXPECT_THAT(plan.status().message(), Not(HasSubstr("outbox_emit()")));
  SlotPlanInputs table_less = Inputs();
  table_less.table_less = true;
  EXPECT_THAT(PlanSlot(Slot(false), Record(), table_less).status().message(),
              HasSubstr("outbox_emit() (--message-prefix) live only in the WAL"));
}

TEST(PlanSlotTest, AGapIsRepublishedOrSkippedWhenTold) {
  auto republish = PlanSlot(Slot(false), Record(), Inputs(OnSlotGap::kRepublish));
  ASSERT_TRUE(republish.ok()) << republish.status();
  EXPECT_EQ(republish->step, SlotPlan::Step::kRepublish);
  EXPECT_FALSE(republish->drop_first);
  EXPECT_THAT(republish->gap, HasSubstr("is gone"));
  auto skip = PlanSlot(Slot(false), Record(), Inputs(OnSlotGap::kSkip));
  ASSERT_TRUE(skip.ok()) << skip.status();
  EXPECT_EQ(skip->step, SlotPlan::Step::kSkip);
}

TEST(PlanSlotTest, ALostSlotIsAGapWithOrWithoutARecord) {
  for (const SlotRecord& record : {Record(), SlotRecord{}}) {
    auto stop = PlanSlot(Slot(true, "lost"), record, Inputs());
    ASSERT_FALSE(stop.ok());
    EXPECT_TRUE(cdc::IsSlotGap(stop.status()));
    EXPECT_THAT(stop.status().message(), HasSubstr("wal_status = lost"));
    EXPECT_THAT(stop.status().message(), HasSubstr("--on-slot-gap=republish"));
    auto republish = PlanSlot(Slot(true, "lost"), record, Inputs(OnSlotGap::kRepublish));
    ASSERT_TRUE(republish.ok()) << republish.status();
    EXPECT_EQ(republish->step, SlotPlan::Step::kRepublish);
    EXPECT_TRUE(republish->drop_first);
  }
}

TEST(PlanSlotTest, AnInterruptedRepublicationIsNeverStreamedPast) {
  auto stop = PlanSlot(Slot(true), Record(/*recovering=*/true), Inputs());
  ASSERT_FALSE(stop.ok());
  EXPECT_TRUE(cdc::IsSlotGap(stop.status()));
  EXPECT_THAT(stop.status().message(), HasSubstr("was interrupted"));
  auto again =
      PlanSlot(Slot(true), Record(/*recovering=*/true), Inputs(OnSlotGap::kRepublish));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->step, SlotPlan::Step::kRepublish);
  EXPECT_TRUE(again->drop_first) << "its slot may have streamed nothing yet";
  auto skip = PlanSlot(Slot(true), Record(/*recovering=*/true), Inputs(OnSlotGap::kSkip));
  ASSERT_TRUE(skip.ok()) << skip.status();
  EXPECT_EQ(skip->step, SlotPlan::Step::kSkip);
  EXPECT_FALSE(skip->drop_first);
}

TEST(PlanSlotTest, ALostSlotIsDroppedEvenWhenAnInterruptedRepublicationMadeIt) {
  auto skip =
      PlanSlot(Slot(true, "lost"), Record(/*recovering=*/true), Inputs(OnSlotGap::kSkip));
  ASSERT_TRUE(skip.ok()) << skip.status();
  EXPECT_EQ(skip->step, SlotPlan::Step::kSkip);
  EXPECT_TRUE(skip->drop_first);
}

// A standby's recovery conflict (rows_removed; "conflicting" on 16) or a lowered
// wal_level invalidates a slot whose WAL is all there: a gap all the same, named
// with its cause and prevention, and the slot is dropped before it is re-made.
TEST(PlanSlotTest, AnInvalidatedSlotIsAGapNamingItsCause) {
  struct Case {
    std::string invalidation, says;
  };
  for (const Case& c : {Case{"rows_removed", "hot_standby_feedback"},
                        Case{"conflicting", "hot_standby_feedback"},
                        Case{"wal_level_insufficient", "wal_level"}}) {
    cdc::SlotFacts slot = Slot(true, "lost");  // As PostgreSQL 16+ shows any.
    slot.invalidation = c.invalidation;
    auto stop = PlanSlot(slot, Record(), Inputs());
    ASSERT_FALSE(stop.ok()) << c.invalidation;
    EXPECT_TRUE(cdc::IsSlotGap(stop.status()));
    EXPECT_THAT(stop.status().message(),
                HasSubstr(absl::StrCat("was invalidated (", c.invalidation)));
    EXPECT_THAT(stop.status().message(), HasSubstr(c.says));
    EXPECT_THAT(stop.status().message(), Not(HasSubstr("max_slot_wal_keep_size")));
    EXPECT_THAT(stop.status().message(), HasSubstr("--on-slot-gap=republish"));
    auto republish = PlanSlot(slot, Record(), Inputs(OnSlotGap::kRepublish));
    ASSERT_TRUE(republish.ok()) << republish.status();
    EXPECT_TRUE(republish->drop_first);
    auto skip = PlanSlot(slot, Record(/*recovering=*/true), Inputs(OnSlotGap::kSkip));
    ASSERT_TRUE(skip.ok()) << skip.status();
    EXPECT_TRUE(skip->drop_first) << "an invalidated slot cannot be streamed from";
  }
}

TEST(PlanSlotTest, CreateFalseNeverCreatesAndSaysWhy) {
  auto missing = PlanSlot(Slot(false), SlotRecord{}, Inputs(OnSlotGap::kStop, false));
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(cdc::IsSlotGap(missing.status()));
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));
  auto gap = PlanSlot(Slot(false), Record(), Inputs(OnSlotGap::kRepublish, false));
  ASSERT_FALSE(gap.ok());
  EXPECT_THAT(gap.status().message(), HasSubstr("--create=false"));
}

TEST(PlanSlotTest, ASlotOfAnotherKindIsRefusedBeforeAnyGap) {
  cdc::SlotFacts other = Slot(true);
  other.plugin = "wal2json";
  auto plan = PlanSlot(other, Record(), Inputs(OnSlotGap::kRepublish));
  ASSERT_FALSE(plan.ok());
  EXPECT_FALSE(cdc::IsSlotGap(plan.status()));
  EXPECT_THAT(plan.status().message(), HasSubstr("wal2json"));
}

TEST(OnSlotGapTest, ParsesItsThreeNames) {
  for (OnSlotGap g : {OnSlotGap::kStop, OnSlotGap::kRepublish, OnSlotGap::kSkip}) {
    EXPECT_EQ(*ParseOnSlotGap(OnSlotGapName(g)), g);
  }
  EXPECT_FALSE(ParseOnSlotGap("ignore").ok());
}

}  // namespace
}  // namespace publisher

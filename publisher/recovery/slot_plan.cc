// PlanSlot: the slot, the record, the flags in; what to do, or why not, out.
#include "publisher/recovery/slot_plan.h"

#include "absl/strings/str_cat.h"

namespace publisher {
namespace {

std::string Recorded(const SlotRecord& record, const SlotPlanInputs& in) {
  return absl::StrCat(in.state_table, ", last written ", record.updated_at);
}

}  // namespace

absl::StatusOr<OnSlotGap> ParseOnSlotGap(absl::string_view text) {
  if (text == "stop") return OnSlotGap::kStop;
  if (text == "republish") return OnSlotGap::kRepublish;
  if (text == "skip") return OnSlotGap::kSkip;
  return absl::InvalidArgumentError("expected stop, republish or skip");
}

absl::string_view OnSlotGapName(OnSlotGap on_gap) {
  switch (on_gap) {
    case OnSlotGap::kStop:
      return "stop";
    case OnSlotGap::kRepublish:
      return "republish";
    case OnSlotGap::kSkip:
      return "skip";
  }
  return "stop";
}

absl::StatusOr<SlotPlan> PlanSlot(const cdc::SlotFacts& slot, const SlotRecord& record,
                                  const SlotPlanInputs& in) {
  SlotPlan plan;
  const std::string& name = slot.name;
  if (slot.exists) {
    absl::Status s = cdc::CheckSlot(slot, in.literal_slot, in.database, in.create);
    if (!s.ok() && !cdc::IsSlotGap(s)) return s;
    if (!s.ok()) {
      // Lost WAL: its message already names the ways out.
      if (in.on_gap == OnSlotGap::kStop) return s;
      plan.gap = std::string(s.message());
      plan.drop_first = true;
    } else if (record.recovering) {
      plan.gap = absl::StrCat(
          "a re-publication from the outbox table into replication "
          "slot \"",
          name, "\" was interrupted (", Recorded(record, in),
          "): the slot must not be streamed from before it ends");
      plan.drop_first = true;
    } else {
      plan.step = SlotPlan::Step::kStream;
      plan.adopt = !record.exists && !in.state_table.empty();
      return plan;
    }
  } else if (record.exists) {
    plan.gap = absl::StrCat(
        "replication slot \"", name, "\" is gone, but this publisher published from it (",
        Recorded(record, in),
        "): events committed after its last confirmation were never read (a failover to "
        "a standby that did not carry the slot, or a slot dropped or invalidated)");
  } else {
    if (!in.create) {
      return cdc::CheckSlot(slot, in.literal_slot, in.database, /*create=*/false);
    }
    plan.step = SlotPlan::Step::kCreate;
    return plan;
  }

  // A gap.
  switch (in.on_gap) {
    case OnSlotGap::kStop:
      return cdc::SlotGapError(
          absl::StrCat(plan.gap, ": ", cdc::SlotGapWaysOut(in.table_less)));
    case OnSlotGap::kRepublish:
      plan.step = SlotPlan::Step::kRepublish;
      break;
    case OnSlotGap::kSkip:
      plan.step = SlotPlan::Step::kSkip;
      break;
  }
  if (!in.create) {
    return absl::FailedPreconditionError(
        absl::StrCat(plan.gap, ": --on-slot-gap=", OnSlotGapName(in.on_gap),
                     " creates the slot anew, which --create=false forbids"));
  }
  if (plan.step == SlotPlan::Step::kSkip && record.recovering && slot.exists &&
      slot.wal_status != "lost" && slot.invalidation.empty()) {
    // The interrupted re-publication's slot is as good as any new one.
    plan.drop_first = false;
  }
  return plan;
}

}  // namespace publisher

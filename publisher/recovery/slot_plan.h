// SlotPlan: what a replication session does with its slot before it streams,
// judged from the slot and from the publisher's own record of it. Pure: the
// facts come from cdc/postgres/catalog.h and publisher/postgres/slot_records.h.
//
// The record (the state table, one row per slot) says that this publisher has
// published from this database before, and up to where. It is an ordinary table,
// so it survives what a slot does not: a physical failover (slots before
// PostgreSQL 17, and slots without failover after), an invalidation by
// max_slot_wal_keep_size, an operator's DROP. A new slot where the record says an
// old one was is a gap: events committed after the old slot's last confirmation
// and before the new slot's start would never be published. By default that
// stops the publisher (exit 2); --on-slot-gap=republish re-publishes the
// outbox rows the old slot may not have confirmed from the table, in the new
// slot's starting snapshot, before streaming; --on-slot-gap=skip accepts the loss.
#ifndef PUBLISHER_RECOVERY_SLOT_PLAN_H_
#define PUBLISHER_RECOVERY_SLOT_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cdc/catalog_facts.h"

namespace publisher {

// The state table's row for one slot.
struct SlotRecord {
  bool exists = false;
  // Every transaction with a (64-bit) id below this one had committed, and its
  // outbox rows were acknowledged by the broker, when the record was written.
  // nullopt: not known (a slot adopted from before the record existed): every
  // row in the table may be unpublished.
  std::optional<uint64_t> published_below_xid;
  std::string updated_at;  // When the row was last written, as the server prints it.
  // A re-publication from the table began and has not finished: the slot that
  // exists was made by it and must not be streamed from before it finishes.
  bool recovering = false;
};

// --on-slot-gap.
enum class OnSlotGap { kStop, kRepublish, kSkip };

struct SlotPlan {
  enum class Step {
    kStream,     // The slot is the one recorded: stream from it.
    kCreate,     // First start: create the slot, record it, stream.
    kRepublish,  // A gap: create the slot in a snapshot, re-publish from the table.
    kSkip,       // A gap the operator accepts: create the slot, record it, stream.
  };
  Step step = Step::kStream;
  // Drop the slot first: it lost its WAL, or an interrupted re-publication made it.
  bool drop_first = false;
  // No record yet for a slot that exists (it predates the record): write one.
  bool adopt = false;
  std::string gap;  // What was lost, for the log; empty when there is no gap.
};

struct SlotPlanInputs {
  std::string literal_slot;  // The slot's name as an SQL literal, for the fixes.
  std::string database;      // current_database().
  bool create = true;        // --create.
  OnSlotGap on_gap = OnSlotGap::kStop;
  std::string state_table;   // For the messages; "" when there is no record.
  bool table_less = false;   // --message-prefix: events that live in the WAL only.
};

// The plan, or the error that stops the session: a slot of another kind
// (cdc::CheckSlot's words), a missing slot under --create=false, or a gap under
// --on-slot-gap=stop (a cdc::SlotGapError).
absl::StatusOr<SlotPlan> PlanSlot(const cdc::SlotFacts& slot, const SlotRecord& record,
                                  const SlotPlanInputs& in);

// "stop", "republish", "skip".
absl::StatusOr<OnSlotGap> ParseOnSlotGap(absl::string_view text);
absl::string_view OnSlotGapName(OnSlotGap on_gap);

}  // namespace publisher

#endif  // PUBLISHER_RECOVERY_SLOT_PLAN_H_

// ApplyOnce: claim, handle, commit.
#include "consumer/apply_once.h"

namespace consumer {

absl::StatusOr<ApplyResult> ApplyOnce(Database& db, ProcessedTable& table,
                                      const Event& event, const Handler& handler) {
  if (absl::Status s = db.Begin(); !s.ok()) {
    db.Rollback();
    return s;
  }
  absl::StatusOr<bool> claimed = table.Claim(db, event.envelope.id(), event.record);
  if (!claimed.ok()) {
    db.Rollback();
    return claimed.status();
  }
  if (!*claimed) {
    // Applied before: nothing to do, nothing written.
    db.Rollback();
    return ApplyResult::kDuplicate;
  }
  if (absl::Status s = handler(event, db); !s.ok()) {
    db.Rollback();
    return s;
  }
  if (absl::Status s = db.Commit(); !s.ok()) {
    db.Rollback();
    return s;
  }
  return ApplyResult::kApplied;
}

}  // namespace consumer

// ApplyOnce: one event's effect, applied at most once per envelope id, in one
// PostgreSQL transaction:
//
//   BEGIN;
//   INSERT INTO processed_messages ... ON CONFLICT (id) DO NOTHING;  -- the claim
//   <the handler's statements>        -- only when the claim inserted the id
//   COMMIT;
//
// The claim and the effect commit together or not at all, so a redelivered event
// (a publisher rewind, an offset not yet committed when the consumer died, a
// rebalance) finds its id and is skipped. Two consumers racing on the same id
// (a rebalance hands a partition over while the old owner is still applying)
// serialize on the primary key: the second claim waits for the first transaction,
// then finds the id.
#ifndef CONSUMER_APPLY_ONCE_H_
#define CONSUMER_APPLY_ONCE_H_

#include "absl/status/statusor.h"
#include "consumer/database.h"
#include "consumer/handler.h"
#include "consumer/processed_table.h"

namespace consumer {

enum class ApplyResult { kApplied, kDuplicate };

// kApplied or kDuplicate once committed; on any failure (the handler's, or the
// database's) the transaction is rolled back and the error returned.
[[nodiscard]] absl::StatusOr<ApplyResult> ApplyOnce(Database& db, ProcessedTable& table,
                                                    const Event& event,
                                                    const Handler& handler);

}  // namespace consumer

#endif  // CONSUMER_APPLY_ONCE_H_

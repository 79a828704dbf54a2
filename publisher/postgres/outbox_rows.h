// OutboxRows: the rows of one outbox table that a gap may have left unpublished,
// read with a cursor in the transaction the connection is in (the new slot's
// starting snapshot), a batch at a time.
//
// "May have left unpublished": every row whose inserting transaction id is at or
// above the recorded horizon (publisher/recovery/horizon.h), or every row when the
// horizon is unknown. A row's xmin is a 32-bit id; it is widened to 64 bits with
// the snapshot's epoch (the ids of live rows lie within 2^31 of it). A row inserted
// in a subtransaction carries the subtransaction's id, which is above its top
// transaction's: such a row is re-published at worst, never skipped.
#ifndef PUBLISHER_POSTGRES_OUTBOX_ROWS_H_
#define PUBLISHER_POSTGRES_OUTBOX_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cdc/pgoutput.h"
#include "common/postgres/sql_connection.h"
#include "publisher/recovery/republisher.h"

namespace publisher {

class OutboxRows : public RowBatches {
 public:
  // Declares the cursor over `relation`'s columns (as DescribeTable gives them).
  // `sql` must be inside a transaction and outlive this.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<OutboxRows>> Open(
      common::SqlConnection& sql, const cdc::pgoutput::Relation& relation,
      std::optional<uint64_t> published_below_xid);
  ~OutboxRows() override;

  absl::StatusOr<std::vector<cdc::pgoutput::Tuple>> Next() override;

 private:
  OutboxRows(common::SqlConnection& sql, std::string cursor)
      : sql_(sql), cursor_(std::move(cursor)) {}
  common::SqlConnection& sql_;
  std::string cursor_;
  bool done_ = false;
};

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_OUTBOX_ROWS_H_

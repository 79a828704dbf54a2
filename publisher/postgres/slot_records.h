// The state table: the publisher's record of its slot, one row per slot, in the
// database it publishes from (publisher/recovery/slot_plan.h says why it exists).
//
//   CREATE TABLE <state table> (
//     slot_name           name PRIMARY KEY,
//     published_below_xid bigint,    -- every transaction below it is published
//     recovering          boolean NOT NULL DEFAULT false,
//     updated_at          timestamptz NOT NULL DEFAULT now());
//
// Written over any connection to the primary: the replication connection while a
// session is set up, the slot watcher's while it streams; when the publisher
// streams from a standby, the connection to --pg-primary.
#ifndef PUBLISHER_POSTGRES_SLOT_RECORDS_H_
#define PUBLISHER_POSTGRES_SLOT_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cdc/lsn.h"
#include "common/postgres/sql_connection.h"
#include "publisher/mapping/columns.h"
#include "publisher/recovery/slot_plan.h"

namespace publisher {

// The CREATE TABLE statement, for the table itself and for the fix of a role that
// may not create it.
std::string StateTableSql(const std::string& quoted_table);

class SlotRecords {
 public:
  // `table` "schema.table"; `slot` the row's key. `sql` must outlive this.
  SlotRecords(common::SqlConnection& sql, const TableName& table, std::string slot);

  // Creates the table when missing (with `create`). kFailedPrecondition when it is
  // missing and may not be created, or the role may not write it, with the fix.
  [[nodiscard]] absl::Status Ensure(bool create);
  [[nodiscard]] absl::StatusOr<SlotRecord> Read();
  // Writes the row whole: the horizon (nullopt: unknown) and whether a
  // re-publication is under way.
  [[nodiscard]] absl::Status Write(std::optional<uint64_t> published_below_xid,
                                   bool recovering);
  // Raises the horizon (never lowers it); keeps everything else.
  [[nodiscard]] absl::Status Advance(uint64_t published_below_xid);

 private:
  common::SqlConnection& sql_;
  std::string quoted_table_;
  std::string slot_literal_;
};

// A horizon candidate (publisher/recovery/horizon.h): the xmin of a snapshot taken
// now (as a 64-bit id) and the WAL insert position after it (a standby's replay
// position).
[[nodiscard]] absl::StatusOr<std::pair<uint64_t, cdc::Lsn>> ReadHorizonCandidate(
    common::SqlConnection& sql);

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_SLOT_RECORDS_H_

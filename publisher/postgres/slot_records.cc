// SlotRecords: the state table's statements.
#include "publisher/postgres/slot_records.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace publisher {
namespace {

std::string Quoted(common::SqlConnection& sql, const TableName& t) {
  return absl::StrCat(sql.Quote(t.schema), ".", sql.Quote(t.table));
}

std::string Horizon(std::optional<uint64_t> xid) {
  return xid ? absl::StrCat(*xid) : "NULL";
}

}  // namespace

std::string StateTableSql(const std::string& quoted_table) {
  return absl::StrCat("CREATE TABLE IF NOT EXISTS ", quoted_table,
                      " (slot_name name PRIMARY KEY, published_below_xid bigint, "
                      "recovering boolean NOT NULL DEFAULT false, "
                      "updated_at timestamptz NOT NULL DEFAULT now())");
}

SlotRecords::SlotRecords(common::SqlConnection& sql, const TableName& table,
                         std::string slot)
    : sql_(sql), quoted_table_(Quoted(sql, table)), slot_literal_(sql.Literal(slot)) {}

absl::Status SlotRecords::Ensure(bool create) {
  ASSIGN_OR_RETURN(
      common::SqlRows rows,
      sql_.Query(absl::StrCat(
          "SELECT pg_catalog.has_table_privilege(pg_catalog.to_regclass(",
          sql_.Literal(quoted_table_), "), 'SELECT, INSERT, UPDATE') WHERE ",
          "pg_catalog.to_regclass(", sql_.Literal(quoted_table_), ") IS NOT NULL")));
  if (rows.empty()) {
    std::string ddl = StateTableSql(quoted_table_);
    if (!create) {
      return absl::FailedPreconditionError(
          absl::StrCat("the publisher's state table ", quoted_table_,
                       " does not exist and --create=false: create it (", ddl, ")"));
    }
    absl::Status s = sql_.Command(ddl);
    if (!s.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot create the publisher's state table ", quoted_table_, ": ", s.message(),
          ": create it as a role that may (", ddl,
          ") and grant this role SELECT, INSERT and UPDATE on it, or choose another "
          "schema with --state-table"));
    }
    return absl::OkStatus();
  }
  if (rows[0].empty() || rows[0][0].value_or("f") != "t") {
    return absl::FailedPreconditionError(absl::StrCat(
        "the role may not read and write the publisher's state table ", quoted_table_,
        ": GRANT SELECT, INSERT, UPDATE ON ", quoted_table_, " TO the publisher's role"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SlotRecord> SlotRecords::Read() {
  ASSIGN_OR_RETURN(common::SqlRows rows,
                   sql_.Query(absl::StrCat(
                       "SELECT published_below_xid, recovering, updated_at::text FROM ",
                       quoted_table_, " WHERE slot_name = ", slot_literal_)));
  SlotRecord r;
  if (rows.empty()) return r;
  if (rows[0].size() != 3)
    return absl::DataLossError("the state table has another shape");
  r.exists = true;
  if (rows[0][0]) {
    uint64_t xid = 0;
    if (!absl::SimpleAtoi(*rows[0][0], &xid))
      return absl::DataLossError("the state table holds a bad horizon");
    r.published_below_xid = xid;
  }
  r.recovering = rows[0][1].value_or("f") == "t";
  r.updated_at = rows[0][2].value_or("");
  return r;
}

absl::Status SlotRecords::Write(std::optional<uint64_t> published_below_xid,
                                bool recovering) {
  return sql_.Command(absl::StrCat(
      "INSERT INTO ", quoted_table_,
      " AS r (slot_name, published_below_xid, recovering, updated_at) VALUES (",
      slot_literal_, ", ", Horizon(published_below_xid), ", ",
      recovering ? "true" : "false",
      ", now()) ON CONFLICT (slot_name) DO UPDATE SET published_below_xid = "
      "EXCLUDED.published_below_xid, recovering = EXCLUDED.recovering, updated_at = "
      "now()"));
}

absl::Status SlotRecords::Advance(uint64_t published_below_xid) {
  // Only ever raised (an unknown one becomes known), and never while a
  // re-publication is under way: its end sets the horizon itself.
  return sql_.Command(absl::StrCat(
      "UPDATE ", quoted_table_,
      " SET published_below_xid = GREATEST(published_below_xid, ", published_below_xid,
      "), updated_at = now() WHERE slot_name = ", slot_literal_, " AND NOT recovering"));
}

absl::StatusOr<std::pair<uint64_t, cdc::Lsn>> ReadHorizonCandidate(
    common::SqlConnection& sql) {
  // One statement: its snapshot is taken before the function reads the insert
  // position. On a standby, the snapshot is of what it replayed, and the position
  // its replay's (the insert position cannot be read there).
  ASSIGN_OR_RETURN(common::SqlRows rows,
                   sql.Query("SELECT pg_catalog.pg_snapshot_xmin("
                             "pg_catalog.pg_current_snapshot())::text, "
                             "(CASE WHEN pg_catalog.pg_is_in_recovery() THEN "
                             "pg_catalog.pg_last_wal_replay_lsn() ELSE "
                             "pg_catalog.pg_current_wal_insert_lsn() END)::text"));
  uint64_t xid = 0;
  if (rows.size() != 1 || rows[0].size() != 2 || !rows[0][0] || !rows[0][1] ||
      !absl::SimpleAtoi(*rows[0][0], &xid)) {
    return absl::DataLossError("the snapshot query returned an unexpected shape");
  }
  ASSIGN_OR_RETURN(cdc::Lsn lsn, cdc::Lsn::Parse(*rows[0][1]));
  return std::make_pair(xid, lsn);
}

}  // namespace publisher

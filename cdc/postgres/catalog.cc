// Catalog reads (pg_settings, pg_roles, pg_class, pg_publication*,
// pg_replication_slots) and the publication/slot creation.
#include "cdc/postgres/catalog.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace cdc {
namespace {

std::string Text(const std::optional<std::string>& v) { return v.value_or(""); }
bool Bool(const std::optional<std::string>& v) { return v.value_or("f") == "t"; }
int64_t Int(const std::optional<std::string>& v) {
  int64_t n = 0;
  return v && absl::SimpleAtoi(*v, &n) ? n : 0;
}

absl::Status Shape(const common::SqlRows& rows, size_t columns, absl::string_view what) {
  if (rows.size() == 1 && rows[0].size() == columns) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(what, " returned an unexpected shape"));
}

}  // namespace

absl::Status ValidateSlotName(absl::string_view slot) {
  bool ok = !slot.empty() && slot.size() <= 63;
  for (char c : slot)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("invalid replication slot name \"", slot,
                   "\": use 1-63 lower-case letters, digits and underscores"));
}

absl::StatusOr<ServerFacts> ReadServerFacts(common::SqlConnection& sql) {
  ASSIGN_OR_RETURN(
      common::SqlRows rows,
      sql.Query(absl::StrCat(
          "SELECT current_setting('server_version_num'), "
          "current_setting('server_version'), current_setting('wal_level'), "
          "pg_catalog.pg_is_in_recovery(), current_setting('max_replication_slots'), "
          "(SELECT count(*) FROM pg_catalog.pg_replication_slots), "
          "current_setting('max_wal_senders'), "
          "(SELECT count(*) FROM pg_catalog.pg_stat_replication), "
          "r.rolname, r.rolreplication, r.rolsuper, current_database(), "
          "(SELECT count(*) FROM pg_catalog.pg_stat_replication w WHERE NOT EXISTS "
          "(SELECT 1 FROM pg_catalog.pg_replication_slots s WHERE s.active_pid = w.pid "
          "AND s.slot_type = 'logical')), ",
          sql.server_version() >= kFailoverSlotsVersion
              ? "current_setting('synchronized_standby_slots')"
              : "''",
          " FROM pg_catalog.pg_roles r WHERE r.rolname = current_user")));
  RETURN_IF_ERROR(Shape(rows, 14, "the server settings query"));
  const auto& r = rows[0];
  ServerFacts f;
  f.version_num = static_cast<int>(Int(r[0]));
  f.version = Text(r[1]);
  f.wal_level = Text(r[2]);
  f.in_recovery = Bool(r[3]);
  f.max_replication_slots = static_cast<int>(Int(r[4]));
  f.replication_slots_used = static_cast<int>(Int(r[5]));
  f.max_wal_senders = static_cast<int>(Int(r[6]));
  f.wal_senders_used = static_cast<int>(Int(r[7]));
  f.role = Text(r[8]);
  f.role_replication = Bool(r[9]);
  f.role_superuser = Bool(r[10]);
  f.database = Text(r[11]);
  f.physical_standbys = static_cast<int>(Int(r[12]));
  f.synchronized_standby_slots = Text(r[13]);
  return f;
}

absl::StatusOr<TableFacts> ReadTableFacts(common::SqlConnection& sql,
                                          const std::string& schema,
                                          const std::string& table) {
  TableFacts f;
  f.schema = schema;
  f.table = table;
  ASSIGN_OR_RETURN(
      common::SqlRows rows,
      sql.Query(absl::StrCat(
          "SELECT pg_catalog.has_table_privilege(c.oid, 'SELECT'), "
          "pg_catalog.pg_has_role(c.relowner, 'USAGE') FROM pg_catalog.pg_class c "
          "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ",
          sql.Literal(schema), " AND c.relname = ", sql.Literal(table),
          " AND c.relkind IN ('r', 'p')")));
  if (rows.empty()) return f;
  RETURN_IF_ERROR(Shape(rows, 2, "the table privileges query"));
  f.exists = true;
  f.can_select = Bool(rows[0][0]);
  f.owned = Bool(rows[0][1]);
  ASSIGN_OR_RETURN(f.shape, DescribeTable(sql, schema, table));
  return f;
}

absl::StatusOr<PublicationFacts> ReadPublicationFacts(common::SqlConnection& sql,
                                                      const std::string& name) {
  PublicationFacts f;
  f.name = name;
  ASSIGN_OR_RETURN(common::SqlRows rows,
                   sql.Query(absl::StrCat(
                       "SELECT pubinsert FROM pg_catalog.pg_publication WHERE pubname = ",
                       sql.Literal(name))));
  if (rows.empty()) return f;
  f.exists = true;
  f.publishes_insert = Bool(rows[0][0]);
  // Row filters exist from PostgreSQL 15.
  ASSIGN_OR_RETURN(
      common::SqlRows tables,
      sql.Query(absl::StrCat(
          "SELECT schemaname, tablename, ",
          sql.server_version() >= 150000 ? "rowfilter" : "NULL",
          " FROM pg_catalog.pg_publication_tables WHERE pubname = ", sql.Literal(name))));
  for (const auto& t : tables) {
    f.tables.push_back(absl::StrCat(Text(t[0]), ".", Text(t[1])));
    f.row_filters.push_back(Text(t[2]));
  }
  return f;
}

absl::StatusOr<SlotFacts> ReadSlotFacts(common::SqlConnection& sql,
                                        const std::string& slot) {
  SlotFacts f;
  f.name = slot;
  // wal_status exists from PostgreSQL 13; the publisher needs 10+. failover and
  // synced from 17.
  bool has_wal_status = sql.server_version() >= 130000;
  bool has_failover = sql.server_version() >= kFailoverSlotsVersion;
  // invalidation_reason from 17; conflicting (a standby's recovery conflict) from 16.
  const char* invalidation = has_failover ? "invalidation_reason"
                             : sql.server_version() >= kStandbyDecodingVersion
                                 ? "CASE WHEN conflicting THEN 'conflicting' END"
                                 : "NULL";
  ASSIGN_OR_RETURN(
      common::SqlRows rows,
      sql.Query(absl::StrCat(
          "SELECT slot_type, plugin, database, ", has_wal_status ? "wal_status" : "NULL",
          ", active, active_pid, "
          // What it keeps: up to the insert position, or a standby's replay position.
          "pg_catalog.pg_wal_lsn_diff(CASE WHEN pg_catalog.pg_is_in_recovery() THEN "
          "pg_catalog.pg_last_wal_replay_lsn() ELSE pg_catalog.pg_current_wal_lsn() END, "
          "restart_lsn)::bigint, ",
          has_failover ? "failover, synced, " : "NULL, NULL, ", invalidation,
          " FROM pg_catalog.pg_replication_slots WHERE slot_name = ",
          sql.Literal(slot))));
  if (rows.empty()) return f;
  RETURN_IF_ERROR(Shape(rows, 10, "the replication slot query"));
  const auto& r = rows[0];
  f.exists = true;
  f.slot_type = Text(r[0]);
  f.plugin = Text(r[1]);
  f.database = Text(r[2]);
  f.wal_status = Text(r[3]);
  f.active = Bool(r[4]);
  if (r[5]) f.active_pid = Int(r[5]);
  if (r[6]) f.retained_bytes = Int(r[6]);
  if (r[7]) f.failover = Bool(r[7]);
  f.synced = Bool(r[8]);
  f.invalidation = Text(r[9]);
  return f;
}

std::vector<std::string> QuoteTables(common::SqlConnection& sql,
                                     const std::vector<std::string>& tables) {
  std::vector<std::string> quoted;
  for (const std::string& table : tables) {
    std::vector<std::string> parts;
    for (absl::string_view part : absl::StrSplit(table, '.'))
      parts.push_back(sql.Quote(part));
    quoted.push_back(absl::StrJoin(parts, "."));
  }
  return quoted;
}

absl::Status EnsureWalLevel(common::SqlConnection& sql) {
  ASSIGN_OR_RETURN(common::SqlRows rows, sql.Query("SHOW wal_level"));
  return CheckWalLevel(rows.empty() || rows[0].empty() ? "" : Text(rows[0][0]));
}

absl::StatusOr<pgoutput::Relation> DescribeTable(common::SqlConnection& sql,
                                                 const std::string& schema,
                                                 const std::string& table) {
  std::string qualified = absl::StrCat(sql.Quote(schema), ".", sql.Quote(table));
  ASSIGN_OR_RETURN(
      common::SqlRows rows,
      sql.Query(absl::StrCat(
          "SELECT c.oid, a.attname, a.atttypid, a.atttypmod FROM pg_catalog.pg_class c "
          "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
          "LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 "
          "AND NOT a.attisdropped WHERE n.nspname = ",
          sql.Literal(schema), " AND c.relname = ", sql.Literal(table),
          " AND c.relkind IN ('r', 'p') ORDER BY a.attnum")));
  if (rows.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", qualified,
                     " does not exist: create it (scripts/schema.sql) or fix --table"));
  }
  pgoutput::Relation r;
  r.oid = static_cast<uint32_t>(Int(rows[0][0]));
  r.schema = schema;
  r.name = table;
  r.replica_identity = 'd';
  for (const auto& row : rows) {
    if (!row[1]) continue;  // A table without columns.
    r.columns.push_back({0, *row[1], static_cast<uint32_t>(Int(row[2])),
                         static_cast<int32_t>(Int(row[3]))});
  }
  return r;
}

absl::Status EnsurePublication(common::SqlConnection& sql, const std::string& name,
                               const std::vector<std::string>& tables, bool create,
                               const std::optional<KeyShard>& shard,
                               const std::string& key_column) {
  std::vector<std::string> quoted = QuoteTables(sql, tables);
  std::string filter = shard ? ShardRowFilter(sql.Quote(key_column), *shard) : "";
  ASSIGN_OR_RETURN(PublicationFacts facts, ReadPublicationFacts(sql, name));
  RETURN_IF_ERROR(
      CheckPublication(facts, sql.Quote(name), tables, quoted, create, filter));
  if (facts.exists) return absl::OkStatus();
  if (tables.empty()) return absl::InvalidArgumentError("no outbox table to publish");
  absl::Status s = sql.Command(CreatePublicationSql(sql.Quote(name), quoted, filter));
  if (absl::IsAlreadyExists(s)) return absl::OkStatus();  // Created concurrently.
  if (absl::IsNotFound(s)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create publication \"", name, "\": ", s.message(),
        ": create the outbox table first (scripts/schema.sql) or fix the table name"));
  }
  return s;
}

absl::StatusOr<Lsn> CreateSlot(common::SqlConnection& sql, const std::string& slot,
                               const SlotCreation& how) {
  RETURN_IF_ERROR(ValidateSlotName(slot));
  std::string command =
      absl::StrCat("CREATE_REPLICATION_SLOT ", sql.Quote(slot), " LOGICAL pgoutput");
  if (sql.server_version() >= 150000) {
    // The option list (15+); FAILOVER from 17.
    absl::StrAppend(
        &command, " (SNAPSHOT '", how.use_snapshot ? "use" : "nothing", "'",
        how.failover && sql.server_version() >= kFailoverSlotsVersion ? ", FAILOVER" : "",
        ")");
  } else {
    absl::StrAppend(&command, how.use_snapshot ? " USE_SNAPSHOT" : " NOEXPORT_SNAPSHOT");
  }
  absl::Duration answer_timeout = sql.answer_timeout();
  sql.set_answer_timeout(absl::InfiniteDuration());
  absl::StatusOr<common::SqlRows> rows = sql.Query(command);
  sql.set_answer_timeout(answer_timeout);
  if (!rows.ok()) return rows.status();
  // slot_name, consistent_point, snapshot_name, output_plugin.
  if (rows->size() != 1 || (*rows)[0].size() < 2 || !(*rows)[0][1]) {
    return absl::DataLossError("CREATE_REPLICATION_SLOT returned an unexpected shape");
  }
  return Lsn::Parse(*(*rows)[0][1]);
}

absl::Status EnableSlotFailover(common::SqlConnection& sql, const std::string& slot) {
  return sql.Command(
      absl::StrCat("ALTER_REPLICATION_SLOT ", sql.Quote(slot), " (FAILOVER true)"));
}

absl::Status DropSlot(common::SqlConnection& sql, const std::string& slot) {
  absl::Status s = sql.Command(absl::StrCat("DROP_REPLICATION_SLOT ", sql.Quote(slot)));
  if (!s.ok() && absl::StrContains(s.message(), "does not exist"))
    return absl::OkStatus();
  return s;
}

absl::Status EnsureSlot(common::SqlConnection& sql, const std::string& slot,
                        bool create) {
  RETURN_IF_ERROR(ValidateSlotName(slot));
  for (int attempt = 0; attempt < 2; ++attempt) {
    ASSIGN_OR_RETURN(SlotFacts facts, ReadSlotFacts(sql, slot));
    ASSIGN_OR_RETURN(common::SqlRows here, sql.Query("SELECT current_database()"));
    RETURN_IF_ERROR(Shape(here, 1, "current_database()"));
    RETURN_IF_ERROR(CheckSlot(facts, sql.Literal(slot), Text(here[0][0]), create));
    if (facts.exists) return absl::OkStatus();
    absl::Status s = CreateSlot(sql, slot, SlotCreation{}).status();
    if (!absl::IsAlreadyExists(s)) return s;
    // Another process created it between our check and CREATE: check it again.
  }
  return absl::AbortedError(
      absl::StrCat("replication slot \"", slot, "\" keeps changing"));
}

}  // namespace cdc

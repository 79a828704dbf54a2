// The rules over catalog facts: what is wrong, and the SQL or setting that fixes it.
#include "cdc/catalog_facts.h"

#include <algorithm>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cdc {

std::string CreatePublicationSql(absl::string_view quoted_name,
                                 const std::vector<std::string>& quoted_tables,
                                 absl::string_view row_filter) {
  std::vector<std::string> tables;
  for (const std::string& t : quoted_tables) {
    tables.push_back(row_filter.empty() ? t
                                        : absl::StrCat(t, " WHERE (", row_filter, ")"));
  }
  return absl::StrCat("CREATE PUBLICATION ", quoted_name, " FOR TABLE ",
                      absl::StrJoin(tables, ", "), " WITH (publish = 'insert')");
}

std::string CreateSlotSql(absl::string_view literal_slot, bool failover) {
  return absl::StrCat("SELECT pg_create_logical_replication_slot(", literal_slot,
                      ", 'pgoutput'", failover ? ", false, false, true" : "", ")");
}

std::string DropSlotSql(absl::string_view literal_slot) {
  return absl::StrCat("SELECT pg_drop_replication_slot(", literal_slot, ")");
}

absl::Status CheckWalLevel(absl::string_view wal_level) {
  if (wal_level == "logical") return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("wal_level is '", wal_level,
                   "', logical decoding needs 'logical': run ALTER SYSTEM SET "
                   "wal_level = logical and restart PostgreSQL"));
}

absl::Status CheckStandbyDecoding(int version_num) {
  if (version_num >= kStandbyDecodingVersion) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "--pg names a standby of PostgreSQL ", version_num / 10000,
      ", which cannot decode: logical decoding on a standby needs PostgreSQL 16 or "
      "later. Point --pg at the primary (a multi-host conninfo with "
      "target_session_attrs=read-write follows a failover)"));
}

absl::Status CheckPublication(const PublicationFacts& facts,
                              absl::string_view quoted_name,
                              const std::vector<std::string>& tables,
                              const std::vector<std::string>& quoted_tables, bool create,
                              absl::string_view row_filter) {
  const std::string& name = facts.name;
  if (!facts.exists) {
    if (create) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("publication \"", name, "\" does not exist: create it (",
                     CreatePublicationSql(quoted_name, quoted_tables, row_filter),
                     ") or allow the publisher to create it"));
  }
  if (!facts.publishes_insert) {
    return absl::FailedPreconditionError(
        absl::StrCat("publication \"", name,
                     "\" does not publish INSERTs: ALTER "
                     "PUBLICATION ",
                     quoted_name, " SET (publish = 'insert')"));
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    if (std::find(facts.tables.begin(), facts.tables.end(), tables[i]) !=
        facts.tables.end()) {
      continue;
    }
    return absl::FailedPreconditionError(
        absl::StrCat("publication \"", name, "\" does not include table ", tables[i],
                     ": ALTER PUBLICATION ", quoted_name, " ADD TABLE ",
                     i < quoted_tables.size() ? quoted_tables[i] : tables[i]));
  }
  for (size_t i = 0; i < facts.tables.size(); ++i) {
    auto wanted = std::find(tables.begin(), tables.end(), facts.tables[i]);
    if (wanted == tables.end()) continue;
    std::string quoted = quoted_tables.size() == tables.size()
                             ? quoted_tables[wanted - tables.begin()]
                             : facts.tables[i];
    absl::string_view filter =
        i < facts.row_filters.size() ? absl::string_view(facts.row_filters[i]) : "";
    if (row_filter.empty() && !filter.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "publication \"", name, "\" filters the rows of ", facts.tables[i], " (WHERE ",
          filter,
          "): the rows it leaves out would never be published. A shard's publication "
          "needs --shard; otherwise ALTER PUBLICATION ",
          quoted_name, " SET TABLE ", quoted, " (without WHERE)"));
    }
    if (!row_filter.empty() && filter.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "publication \"", name, "\" publishes every row of ", facts.tables[i],
          ", not only this shard's keys: ALTER PUBLICATION ", quoted_name, " SET TABLE ",
          quoted, " WHERE (", row_filter, ")"));
    }
  }
  return absl::OkStatus();
}

std::string InvalidationCause(absl::string_view invalidation) {
  if (invalidation == "rows_removed") {
    return ": on a standby, a recovery conflict: the primary removed catalog rows the "
           "slot needed. Keep hot_standby_feedback on, through a physical slot "
           "(primary_slot_name) that holds it while the standby is disconnected";
  }
  if (invalidation == "conflicting") {
    return ": on a standby, a recovery conflict: the primary removed catalog rows the "
           "slot needed (keep hot_standby_feedback on, through a physical slot, "
           "primary_slot_name, that holds it while the standby is disconnected), or its "
           "wal_level was lowered below logical";
  }
  if (invalidation == "wal_level_insufficient") {
    return ": the primary's wal_level was lowered below logical; set it back";
  }
  if (invalidation == "idle_timeout") {
    return ": idle_replication_slot_timeout passed while nothing streamed it";
  }
  return "";
}

absl::Status CheckSlot(const SlotFacts& facts, absl::string_view literal_slot,
                       absl::string_view database, bool create) {
  const std::string& slot = facts.name;
  if (!facts.exists) {
    if (create) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "replication slot \"", slot, "\" does not exist: create it (",
        CreateSlotSql(literal_slot), ") or allow the publisher to create it"));
  }
  std::string drop = DropSlotSql(literal_slot);
  if (facts.slot_type != "logical") {
    return absl::FailedPreconditionError(absl::StrCat(
        "replication slot \"", slot, "\" is a ", facts.slot_type,
        " slot, not logical: choose another slot name or drop it (", drop, ")"));
  }
  if (facts.plugin != "pgoutput") {
    return absl::FailedPreconditionError(
        absl::StrCat("replication slot \"", slot, "\" uses plugin ", facts.plugin,
                     ", not pgoutput: choose another slot name or drop it (", drop, ")"));
  }
  if (facts.database != database) {
    return absl::FailedPreconditionError(
        absl::StrCat("replication slot \"", slot, "\" belongs to database \"",
                     facts.database, "\", not \"", database,
                     "\": connect to that database or choose another slot name"));
  }
  // An invalidated slot reads wal_status lost whatever the cause (16+): a cause
  // other than removed WAL is named as such.
  if (!facts.invalidation.empty() && facts.invalidation != "wal_removed") {
    return SlotGapError(absl::StrCat(
        "replication slot \"", slot, "\" was invalidated (", facts.invalidation,
        InvalidationCause(facts.invalidation),
        "): it can no longer be streamed from, and events committed since its last "
        "confirmation were never read; drop and recreate the slot and re-publish from "
        "the outbox table: restart with --on-slot-gap=republish, which does both "
        "(consumers deduplicate on id), or do it by hand (",
        drop, "); --on-slot-gap=skip accepts the loss"));
  }
  if (facts.wal_status == "lost") {
    return SlotGapError(absl::StrCat(
        "replication slot \"", slot,
        "\" has lost WAL it still needed (wal_status = lost, see "
        "max_slot_wal_keep_size): events committed meanwhile are gone from the WAL; "
        "drop and recreate the slot and re-publish from the outbox table: restart with "
        "--on-slot-gap=republish, which does both (every row the old slot may not "
        "have confirmed; consumers deduplicate on id), or do it by hand (",
        drop, "); --on-slot-gap=skip accepts the loss"));
  }
  return absl::OkStatus();
}

namespace {
constexpr char kGapPayload[] = "type.googleapis.com/outbox.publisher.SlotGap";
constexpr char kInUsePayload[] = "type.googleapis.com/outbox.publisher.SlotInUse";
}  // namespace

absl::Status SlotGapError(absl::string_view message) {
  absl::Status s = absl::FailedPreconditionError(message);
  s.SetPayload(kGapPayload, absl::Cord("gap"));
  return s;
}

bool IsSlotGap(const absl::Status& status) {
  return status.GetPayload(kGapPayload).has_value();
}

absl::Status SlotInUseError(absl::string_view message) {
  absl::Status s = absl::UnavailableError(message);
  s.SetPayload(kInUsePayload, absl::Cord("in use"));
  return s;
}

bool IsSlotInUse(const absl::Status& status) {
  return absl::IsUnavailable(status) && status.GetPayload(kInUsePayload).has_value();
}

std::string SlotGapWaysOut(bool table_less) {
  std::string out =
      "restart with --on-slot-gap=republish to re-publish from the outbox table every "
      "row the old slot may not have confirmed (consumers deduplicate on id), or with "
      "--on-slot-gap=skip to accept the loss";
  if (table_less) {
    absl::StrAppend(&out,
                    "; events sent with outbox_emit() (--message-prefix) live only in "
                    "the WAL and cannot be re-published");
  }
  return out;
}

}  // namespace cdc

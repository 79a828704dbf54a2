// What the publisher needs to know of a PostgreSQL server's catalog, and the rules
// that judge it. Pure: cdc/postgres/catalog.h reads these facts over libpq; the session
// start-up, the pre-flight check (--check) and the slot watcher all judge them
// with the same rules, so each problem is reported with the same words and fix
// wherever it is found.
//
// Every rule returns OK or kFailedPrecondition with one sentence that names the
// problem and the fix.
#ifndef CDC_CATALOG_FACTS_H_
#define CDC_CATALOG_FACTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cdc/pgoutput.h"

namespace cdc {

// The server and the connected role.
struct ServerFacts {
  int version_num = 0;  // server_version_num, e.g. 150004.
  std::string version;  // server_version, e.g. "15.4 (Debian 15.4-1)".
  std::string wal_level;
  bool in_recovery = false;
  int max_replication_slots = 0;
  int replication_slots_used = 0;
  int max_wal_senders = 0;
  int wal_senders_used = 0;
  // Physical standbys streaming from this server (walsenders of no logical slot),
  // and on PostgreSQL 17+ synchronized_standby_slots.
  int physical_standbys = 0;
  std::string synchronized_standby_slots;
  std::string role;
  bool role_replication = false;  // rolreplication.
  bool role_superuser = false;
  std::string database;
};

// One outbox table and what the role may do with it.
struct TableFacts {
  std::string schema, table;
  bool exists = false;
  bool can_select = false;   // has_table_privilege(..., 'SELECT').
  bool owned = false;        // The role is (a member of) its owner: may publish it.
  pgoutput::Relation shape;  // Columns as a Relation message would list them.
};

struct PublicationFacts {
  std::string name;
  bool exists = false;
  bool publishes_insert = false;
  std::vector<std::string> tables;  // "schema.table" of every table it includes.
  // Each table's row filter (PostgreSQL 15+), "" for none; parallel to tables.
  std::vector<std::string> row_filters = {};
};

struct SlotFacts {
  std::string name;
  bool exists = false;
  std::string slot_type;  // "logical" or "physical".
  std::string plugin;
  std::string database;
  std::string wal_status;  // reserved, extended, unreserved, lost ("" before 13).
  bool active = false;
  std::optional<int64_t> active_pid;
  // pg_current_wal_lsn() - restart_lsn: the WAL this slot keeps on disk.
  std::optional<int64_t> retained_bytes;
  // PostgreSQL 17+: whether standbys with sync_replication_slots carry the slot
  // (failover), and on a standby whether this copy came from the primary (synced).
  // nullopt before 17.
  std::optional<bool> failover;
  bool synced = false;
  // Why the server invalidated the slot, "" while it is valid: 17+'s
  // invalidation_reason (wal_removed, rows_removed, wal_level_insufficient,
  // idle_timeout); on 16 "conflicting" for a recovery conflict on a standby
  // (rows_removed or wal_level_insufficient). WAL removal also reads wal_status lost.
  std::string invalidation = {};
};

// Failover slots (a standby carries the slot across a promotion) exist from 17.
inline constexpr int kFailoverSlotsVersion = 170000;
// Logical decoding on a standby: a standby of 16+ holds logical slots.
inline constexpr int kStandbyDecodingVersion = 160000;

// OK for a standby of `version_num` that can decode; kFailedPrecondition naming
// the fix otherwise.
absl::Status CheckStandbyDecoding(int version_num);

// The SQL a user runs to create what the publisher would create.
// `row_filter`: the WHERE clause of each table, a shard's (key_shard.h); "" for
// none.
std::string CreatePublicationSql(absl::string_view quoted_name,
                                 const std::vector<std::string>& quoted_tables,
                                 absl::string_view row_filter = "");
// `failover`: as a failover slot (PostgreSQL 17+).
std::string CreateSlotSql(absl::string_view literal_slot, bool failover = false);
std::string DropSlotSql(absl::string_view literal_slot);

// wal_level must be logical.
absl::Status CheckWalLevel(absl::string_view wal_level);

// An existing publication must publish INSERTs and include every table of
// `tables` ("schema.table"); `quoted_*` are the same names quoted for SQL. A
// missing one is an error only when the publisher may not create it. A shard's
// publication (`row_filter` not "") must filter every table; an unsharded one must
// filter none, or the rows it filters out would never be published. (Whether the
// shards' filters cover every key once is --check's to say: key_shard.h.)
absl::Status CheckPublication(const PublicationFacts& facts,
                              absl::string_view quoted_name,
                              const std::vector<std::string>& tables,
                              const std::vector<std::string>& quoted_tables, bool create,
                              absl::string_view row_filter = "");

// Why a slot invalidated for `invalidation` (SlotFacts::invalidation) was, and
// what prevents it: ": ..." to follow the reason, or "".
std::string InvalidationCause(absl::string_view invalidation);

// An existing slot must be a logical pgoutput slot of `database` that has not lost
// WAL nor been invalidated. A missing one is an error only when the publisher may not
// create it. A slot that lost WAL is a gap (SlotGapError).
absl::Status CheckSlot(const SlotFacts& facts, absl::string_view literal_slot,
                       absl::string_view database, bool create);

// A gap in the slot's history: events committed in it would never be published
// from the slot. A kFailedPrecondition that IsSlotGap tells apart, because a gap
// stops the publisher with exit 2 whenever it is found (after a failover too): it
// is the operator's to decide.
absl::Status SlotGapError(absl::string_view message);
bool IsSlotGap(const absl::Status& status);

// Another connection streams the slot (SQLSTATE 55006 from START_REPLICATION, or
// an active_pid in pg_replication_slots): the other half of a hot-standby pair.
// A kUnavailable that IsSlotInUse tells apart by its payload, never by the
// server's words, which follow its lc_messages.
absl::Status SlotInUseError(absl::string_view message);
bool IsSlotInUse(const absl::Status& status);

// The ways out of a gap, for its message: --on-slot-gap=republish or skip, and
// with `table_less` why events without a table cannot be re-published.
std::string SlotGapWaysOut(bool table_less);

}  // namespace cdc

#endif  // CDC_CATALOG_FACTS_H_

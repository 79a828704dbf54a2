// Catalog reads and the two catalog writes the publisher makes (its publication
// and its slot), over a SqlConnection. The rules that judge what is read are pure
// and live in cdc/catalog_facts.h.
//
// Reads work on a plain connection and on a replication=database one;
// EnsureSlot's CREATE_REPLICATION_SLOT needs a replication connection.
#ifndef CDC_POSTGRES_CATALOG_H_
#define CDC_POSTGRES_CATALOG_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cdc/catalog_facts.h"
#include "cdc/key_shard.h"
#include "cdc/lsn.h"
#include "common/postgres/sql_connection.h"

namespace cdc {

[[nodiscard]] absl::StatusOr<ServerFacts> ReadServerFacts(common::SqlConnection& sql);
[[nodiscard]] absl::StatusOr<TableFacts> ReadTableFacts(common::SqlConnection& sql,
                                                        const std::string& schema,
                                                        const std::string& table);
[[nodiscard]] absl::StatusOr<PublicationFacts> ReadPublicationFacts(
    common::SqlConnection& sql, const std::string& name);
// retained_bytes is left empty on a server in recovery (no current WAL LSN there).
[[nodiscard]] absl::StatusOr<SlotFacts> ReadSlotFacts(common::SqlConnection& sql,
                                                      const std::string& slot);

// "schema.table" names quoted for SQL: "public"."outbox".
std::vector<std::string> QuoteTables(common::SqlConnection& sql,
                                     const std::vector<std::string>& tables);

// kFailedPrecondition unless wal_level is logical.
[[nodiscard]] absl::Status EnsureWalLevel(common::SqlConnection& sql);

// The current shape of `schema`.`table`, as a Relation message would describe it.
// kFailedPrecondition when the table does not exist.
[[nodiscard]] absl::StatusOr<pgoutput::Relation> DescribeTable(common::SqlConnection& sql,
                                                               const std::string& schema,
                                                               const std::string& table);

// Ensures publication `name` exists and publishes INSERTs of every table in
// `tables` ("schema.table"). When missing and `create`, creates it FOR TABLE
// `tables` WITH (publish = 'insert'); for a `shard`, with its row filter over
// `key_column` on every table (key_shard.h; PostgreSQL 15+).
[[nodiscard]] absl::Status EnsurePublication(
    common::SqlConnection& sql, const std::string& name,
    const std::vector<std::string>& tables, bool create,
    const std::optional<KeyShard>& shard = std::nullopt,
    const std::string& key_column = "");

// How CreateSlot makes a slot.
struct SlotCreation {
  // A failover slot (PostgreSQL 17+; ignored before).
  bool failover = false;
  // Use the slot's starting snapshot for the transaction the connection is in
  // (which must be REPEATABLE READ and READ ONLY, and have run nothing yet): what
  // it reads is exactly what committed before the slot's first change.
  bool use_snapshot = false;
};

// CREATE_REPLICATION_SLOT `slot` LOGICAL pgoutput on a replication connection;
// returns its consistent point (it streams what commits after it).
// kAlreadyExists when the slot exists. No answer timeout applies: creating a slot
// waits for every transaction running now to end, however long.
[[nodiscard]] absl::StatusOr<Lsn> CreateSlot(common::SqlConnection& sql,
                                             const std::string& slot,
                                             const SlotCreation& how);

// Makes an existing slot a failover slot (ALTER_REPLICATION_SLOT, PostgreSQL 17+).
[[nodiscard]] absl::Status EnableSlotFailover(common::SqlConnection& sql,
                                              const std::string& slot);

// DROP_REPLICATION_SLOT on a replication connection; OK when it does not exist.
[[nodiscard]] absl::Status DropSlot(common::SqlConnection& sql, const std::string& slot);

// Ensures logical slot `slot` exists in this database with the pgoutput plugin,
// creating it (no snapshot, no failover) when missing and `create`.
// kFailedPrecondition for a slot of another plugin or database, a physical slot,
// or a slot whose WAL was removed; kInvalidArgument for a name the server would
// refuse. The publisher itself goes through its slot plan
// (publisher/postgres/slot_setup.h); this serves the WAL reader's own tests and
// tools.
[[nodiscard]] absl::Status EnsureSlot(common::SqlConnection& sql, const std::string& slot,
                                      bool create);

// Slot names are restricted by the server to 1-63 lower-case letters, digits, '_'.
[[nodiscard]] absl::Status ValidateSlotName(absl::string_view slot);

}  // namespace cdc

#endif  // CDC_POSTGRES_CATALOG_H_

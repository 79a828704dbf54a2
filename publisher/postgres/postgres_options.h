// What the publisher's PostgreSQL shells are told. The program builds these from
// its Config (publisher/program/options.h), which holds the flags' defaults.
#ifndef PUBLISHER_POSTGRES_POSTGRES_OPTIONS_H_
#define PUBLISHER_POSTGRES_POSTGRES_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cdc/key_shard.h"
#include "publisher/mapping/columns.h"
#include "publisher/recovery/slot_plan.h"

namespace publisher {

// Where the outbox is read from: both shells' connection and objects.
struct OutboxSource {
  std::string pg;  // --pg: libpq conninfo or URI; "" = PG* environment.
  // --pg-primary: the primary, when `pg` is a standby; "" = none (docs/operations.md,
  // "Publishing from a standby").
  std::string pg_primary;
  std::string slot;
  std::string publication;
  std::vector<TableName> tables;
  // --shard: the publication keeps this shard's keys of key_column.
  std::optional<cdc::KeyShard> shard = std::nullopt;
  std::string key_column = {};
};

// Replication sessions (PgSessionSource).
struct PgSessionOptions {
  OutboxSource source;
  bool create = true;  // --create: the publication and the slot may be created.
  bool failover_slot = true;  // --failover-slot: on PostgreSQL 17+.
  // --state-table: the publisher's record of its slot; nullopt = none (no gap
  // is ever detected).
  std::optional<TableName> state_table;
  OnSlotGap on_slot_gap = OnSlotGap::kStop;  // --on-slot-gap
  size_t max_in_flight = 20000;  // --max-in-flight, for re-publishing too.
  ColumnMapping columns;
  std::string topic;           // --topic: the template, checked at every session.
  std::string message_prefix;  // --message-prefix; "" = off.
  // --replication-timeout: also how long setting a session up may take.
  absl::Duration replication_timeout;
};

// The slot watcher (SlotWatcher).
struct SlotWatcherOptions {
  OutboxSource source;
  std::optional<TableName> state_table;  // Whose horizon it advances.
  int64_t max_retained_wal = 0;        // --max-retained-wal: bytes; warn above.
  absl::Duration slot_check_interval;  // --slot-check-interval
};

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_POSTGRES_OPTIONS_H_

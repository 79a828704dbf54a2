// What the publisher's PostgreSQL shells are told. The program builds these from
// its Config (publisher/program/options.h), which holds the flags' defaults.
#ifndef PUBLISHER_POSTGRES_POSTGRES_OPTIONS_H_
#define PUBLISHER_POSTGRES_POSTGRES_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "publisher/mapping/columns.h"

namespace publisher {

// Where the outbox is read from: both shells' connection and objects.
struct OutboxSource {
  std::string pg;  // --pg: libpq conninfo or URI; "" = PG* environment.
  std::string slot;
  std::string publication;
  std::vector<TableName> tables;
};

// Replication sessions (PgSessionSource).
struct PgSessionOptions {
  OutboxSource source;
  bool create = true;  // --create: the publication and the slot may be created.
  ColumnMapping columns;
  std::string topic;           // --topic: the template, checked at every session.
  std::string message_prefix;  // --message-prefix; "" = off.
  // --replication-timeout: also how long setting a session up may take.
  absl::Duration replication_timeout;
};

// The slot watcher (CatalogWatcher).
struct CatalogWatcherOptions {
  OutboxSource source;
  int64_t max_retained_wal = 0;        // --max-retained-wal: bytes; warn above.
  absl::Duration slot_check_interval;  // --slot-check-interval
};

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_POSTGRES_OPTIONS_H_

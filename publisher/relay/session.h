// Session and SessionSource: how the supervisor opens replication sessions. The
// libpq implementation is PgSession (publisher/postgres/pg_session.h); tests
// script fakes.
#ifndef PUBLISHER_RELAY_SESSION_H_
#define PUBLISHER_RELAY_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cdc/timeline.h"
#include "cdc/wal_stream.h"

namespace publisher {

// A replication session that has started streaming from the slot.
struct Session {
  std::unique_ptr<cdc::WalStream> stream;
  std::string database;        // For envelopes' source.database.
  std::string system_id = {};  // IDENTIFY_SYSTEM's: for exactly-once checkpoints.
  uint32_t timeline = 0;       // IDENTIFY_SYSTEM's, and the timeline's history.
  std::vector<cdc::TimelineSwitch> history = {};
};

// Opens a replication session: connect, check, start streaming from the slot.
class SessionSource {
 public:
  virtual ~SessionSource() = default;
  [[nodiscard]] virtual absl::StatusOr<Session> Open() = 0;
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_SESSION_H_

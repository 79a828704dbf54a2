// Publishing from a standby (PostgreSQL 16+), the libpq side: whether the server
// is one, its primary (--pg-primary) where the state table and the publication
// live, the publication a standby can only find, and the wait of a slot's
// creation for the primary's next running-transactions record
// (docs/operations.md, "Publishing from a standby").
#ifndef PUBLISHER_POSTGRES_STANDBY_H_
#define PUBLISHER_POSTGRES_STANDBY_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cdc/key_shard.h"
#include "common/log.h"
#include "common/postgres/sql_connection.h"

namespace publisher {

// pg_is_in_recovery() of the server `sql` is connected to.
[[nodiscard]] absl::StatusOr<bool> InRecovery(common::SqlConnection& sql);

// The primary of the standby whose IDENTIFY_SYSTEM said `system_id`: connected,
// checked to be a primary (not in recovery) of the same system. kFailedPrecondition
// naming what is wrong otherwise.
[[nodiscard]] absl::StatusOr<std::unique_ptr<common::SqlConnection>> ConnectPrimary(
    const std::string& conninfo, const std::string& system_id, absl::Duration timeout);

// The publication, as a standby sees it. A standby cannot create one: with a
// primary and `create` it is created there and awaited here (until `wait`);
// otherwise kFailedPrecondition says what to run on the primary.
[[nodiscard]] absl::Status EnsurePublicationOnStandby(
    common::SqlConnection& standby, common::SqlConnection* primary,
    const std::string& name, const std::vector<std::string>& tables, bool create,
    const std::optional<cdc::KeyShard>& shard, const std::string& key_column,
    absl::Duration wait);

// While it lives, a slot is being created on a standby, which waits for the
// primary to log its running transactions. With a primary conninfo it asks for
// that record every second (pg_log_standby_snapshot()); without one, or when the
// primary cannot be reached, it logs every 10 s what the creation waits for and
// how to end the wait, so that it never waits silently.
class StandbySnapshotNudge {
 public:
  StandbySnapshotNudge(std::string primary_conninfo, std::string slot,
                       common::Logger& log);
  ~StandbySnapshotNudge();
  StandbySnapshotNudge(const StandbySnapshotNudge&) = delete;
  StandbySnapshotNudge& operator=(const StandbySnapshotNudge&) = delete;

 private:
  void Loop();
  // One pg_log_standby_snapshot() on the primary, connecting first if needed.
  absl::Status Nudge();

  const std::string conninfo_;
  const std::string slot_;
  common::Logger& log_;
  std::unique_ptr<common::SqlConnection> primary_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_STANDBY_H_

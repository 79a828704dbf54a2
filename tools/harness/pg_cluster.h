// A throwaway PostgreSQL cluster for one test, via tools/harness/pg_cluster.sh:
// started on a free port with wal_level=logical, stopped and deleted by the
// destructor, and by the script's watchdog if the test process dies first.
#ifndef TOOLS_HARNESS_PG_CLUSTER_H_
#define TOOLS_HARNESS_PG_CLUSTER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/harness/shell.h"

typedef struct pg_conn PGconn;

namespace harness {

using Rows = std::vector<std::vector<std::optional<std::string>>>;

// A plain (non-replication) SQL session.
class PgSession {
 public:
  explicit PgSession(PGconn* conn) : conn_(conn) {}
  ~PgSession();
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  // Runs `sql` (one or more statements); returns the rows of the last one.
  absl::StatusOr<Rows> Exec(const std::string& sql);
  // Runs `sql` and returns the first column of the first row; fails on no rows.
  absl::StatusOr<std::string> Value(const std::string& sql);

 private:
  PGconn* conn_;
};

// A plain SQL session over any conninfo (a multi-host one follows the primary).
absl::StatusOr<std::unique_ptr<PgSession>> ConnectTo(const std::string& conninfo);

class PgCluster {
 public:
  // Starts a cluster; `settings` are extra "name=value" server settings. `version`
  // is a major release (14-18); 0 means $PG_VERSION, else Debian's 15
  // (tools/harness/pg_cluster.sh).
  static absl::StatusOr<std::unique_ptr<PgCluster>> Start(
      const std::vector<std::string>& settings = {}, int version = 0);

  // Starts a physical standby of `primary` from an online backup of it, streaming
  // through physical slot `slot` (created on the primary here), with
  // hot_standby_feedback on and, on 17+, sync_replication_slots on. `port` 0
  // picks a free one; another reuses that port (a rebuilt old primary keeps its
  // place in a multi-host conninfo). Returns once the standby streams.
  static absl::StatusOr<std::unique_ptr<PgCluster>> StartStandby(
      PgCluster& primary, const std::string& slot,
      const std::vector<std::string>& settings = {}, int port = 0);
  ~PgCluster();

  // key=value conninfo for the postgres database over TCP.
  std::string conninfo(const std::string& database = "postgres") const;
  // The same as a postgresql:// URI.
  std::string uri(const std::string& database = "postgres") const;
  const std::string& dir() const { return dir_; }
  int port() const { return port_; }

  absl::StatusOr<std::unique_ptr<PgSession>> Connect(
      const std::string& database = "postgres");
  // One-shot convenience over a fresh session.
  absl::StatusOr<Rows> Exec(const std::string& sql);
  absl::StatusOr<std::string> Value(const std::string& sql);

  // Restarts the server (pg_ctl restart -m `mode`).
  absl::Status Restart(const std::string& mode = "fast");
  // kill -9 of the postmaster: a crash. Resume starts it again (crash recovery).
  absl::Status Kill();
  absl::Status Resume();
  // pg_ctl promote, waiting until the server accepts writes.
  absl::Status Promote();
  // server_version_num / 10000, read from the server.
  absl::StatusOr<int> MajorVersion();

 private:
  PgCluster(std::string dir, int port) : dir_(std::move(dir)), port_(port) {}
  std::string dir_;
  int port_;
};

}  // namespace harness

#endif  // TOOLS_HARNESS_PG_CLUSTER_H_

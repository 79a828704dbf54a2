// SqlConnection: one libpq connection that runs SQL and hands rows back as text.
// The replication stream runs its catalog commands through one (a walsender
// started with replication=database accepts SQL), and the pre-flight check and
// the slot watcher through a plain one of their own.
//
// Status codes: kUnavailable = the server cannot be reached or the connection
// broke (retrying later may work); kFailedPrecondition = the server refused us or
// the statement (authentication, privileges, a missing object); kAlreadyExists
// and kNotFound for SQLSTATEs 42710 (duplicate object) and 42P01 (undefined table);
// kAborted for 40001, 40P01 and 55P03 (a serialization failure, a deadlock, a
// lock not granted in time: run the transaction again).
#ifndef COMMON_POSTGRES_SQL_CONNECTION_H_
#define COMMON_POSTGRES_SQL_CONNECTION_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace common {

// A PGresult freed when it goes out of scope.
struct PgResultDeleter {
  void operator()(PGresult* r) const;
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// Rows of text values; a NULL is nullopt.
using SqlRows = std::vector<std::vector<std::optional<std::string>>>;

class SqlConnection {
 public:
  enum class Mode { kPlain, kReplication };

  // Connects with `conninfo` (key=value string or URI; "" = PG* environment). In
  // kReplication mode it adds replication=database. application_name,
  // connect_timeout (seconds, 0 = libpq's default: wait forever) and the TCP
  // keepalive and user-timeout defaults (conninfo.h) apply unless the conninfo
  // sets them. The error message carries the conninfo with its password
  // redacted.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqlConnection>> Connect(
      const std::string& conninfo, Mode mode,
      absl::string_view application_name = "outbox-publisher", int connect_timeout = 0);

  ~SqlConnection();
  SqlConnection(const SqlConnection&) = delete;
  SqlConnection& operator=(const SqlConnection&) = delete;

  // Runs one statement; the rows it returned (none for a command).
  [[nodiscard]] absl::StatusOr<SqlRows> Query(const std::string& sql);
  [[nodiscard]] absl::Status Command(const std::string& sql);

  // How long a statement may wait for the server's answer; unbounded by default.
  // A connection that went silent without closing otherwise waits
  // forever: the server's own statement_timeout cannot help when its answer
  // never arrives. Past the timeout the statement fails with kUnavailable, and
  // the connection, left mid-statement, must be dropped.
  void set_answer_timeout(absl::Duration timeout) { answer_timeout_ = timeout; }
  absl::Duration answer_timeout() const { return answer_timeout_; }

  // Sends `sql` and waits, within the answer timeout, for its last result (or the
  // first result that starts the copy protocol). Not null when OK.
  [[nodiscard]] absl::StatusOr<PgResult> Execute(const std::string& sql);
  // OK for a result with rows or of a command; otherwise the error, with its code
  // chosen as the overview says.
  [[nodiscard]] absl::Status ResultStatus(const PGresult* result) const;

  // `identifier` as a quoted SQL identifier; `text` as a quoted SQL literal.
  std::string Quote(absl::string_view identifier);
  std::string Literal(absl::string_view text);

  int server_version() const;  // e.g. 150004.
  // kUnavailable naming `what` and libpq's last error.
  absl::Status ConnectionError(absl::string_view what) const;

  // The libpq handle, for the copy protocol (ReplicationStream only). Owned here.
  PGconn* raw() const { return conn_; }

 private:
  explicit SqlConnection(PGconn* conn) : conn_(conn) {}
  // Reads until a result is ready (PQisBusy false), or fails at `deadline`.
  absl::Status AwaitResult(absl::Time deadline);
  PGconn* conn_;
  absl::Duration answer_timeout_ = absl::InfiniteDuration();
};

// libpq's message without its trailing newline ("" for null).
std::string TrimmedPgMessage(const char* message);

// The SQLSTATE of a failed result ("" when it has none).
std::string ResultSqlState(const PGresult* result);

}  // namespace common

#endif  // COMMON_POSTGRES_SQL_CONNECTION_H_

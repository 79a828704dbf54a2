// SqlConnection: one libpq connection that runs SQL and hands rows back as text.
// The replication stream runs its catalog commands through one (a walsender
// started with replication=database accepts SQL), and the pre-flight check and
// the slot watcher through a plain one of their own.
//
// Status codes: kUnavailable = the server cannot be reached or the connection
// broke (retrying later may work); kFailedPrecondition = the server refused us or
// the statement (authentication, privileges, a missing object); kAlreadyExists
// and kNotFound for SQLSTATEs 42710 (duplicate object) and 42P01 (undefined table).
#ifndef CDC_SQL_CONNECTION_H_
#define CDC_SQL_CONNECTION_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace cdc {

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
  PGconn* conn_;
};

// libpq's message without its trailing newline ("" for null).
std::string TrimmedPgMessage(const char* message);

// A PGresult freed when it goes out of scope.
struct PgResultDeleter {
  void operator()(PGresult* r) const;
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// The SQLSTATE of a failed result ("" when it has none).
std::string ResultSqlState(const PGresult* result);

}  // namespace cdc

#endif  // CDC_SQL_CONNECTION_H_

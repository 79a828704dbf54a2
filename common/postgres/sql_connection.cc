// SqlConnection: connect, run a statement, classify what went wrong.
#include "common/postgres/sql_connection.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/postgres/conninfo.h"
#include "common/status_macros.h"

namespace common {
namespace {

// SQLSTATEs with a status code of their own.
constexpr char kDuplicateObject[] = "42710";
constexpr char kUndefinedTable[] = "42P01";
// A transaction that lost a race with another; running it again may succeed.
constexpr char kSerializationFailure[] = "40001";
constexpr char kDeadlockDetected[] = "40P01";
constexpr char kLockNotAvailable[] = "55P03";  // lock_timeout, NOWAIT.

// Refusals that retrying will not cure: the operator must change something.
bool IsPermanentConnectFailure(absl::string_view message) {
  for (absl::string_view needle :
       {"password authentication failed", "no pg_hba.conf entry", "does not exist",
        "must be superuser or replication role", "permission denied",
        "no password supplied", "invalid connection option"}) {
    if (absl::StrContains(message, needle)) return true;
  }
  return false;
}

}  // namespace

void PgResultDeleter::operator()(PGresult* r) const { PQclear(r); }

std::string ResultSqlState(const PGresult* r) {
  const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  return s == nullptr ? "" : s;
}

std::string TrimmedPgMessage(const char* message) {
  return std::string(absl::StripAsciiWhitespace(message == nullptr ? "" : message));
}

absl::StatusOr<std::unique_ptr<SqlConnection>> SqlConnection::Connect(
    const std::string& conninfo, Mode mode, absl::string_view application_name,
    int connect_timeout) {
  ASSIGN_OR_RETURN(ConnParams params, ParseConninfo(conninfo));
  if (mode == Mode::kReplication)
    params = WithParam(std::move(params), "replication", "database");
  ConnParams defaults = SocketTimeoutDefaults();
  defaults.emplace_back("application_name", std::string(application_name));
  if (connect_timeout > 0)
    defaults.emplace_back("connect_timeout", absl::StrCat(connect_timeout));
  params = WithDefaults(std::move(params), defaults);
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : params) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/0);
  if (conn == nullptr)
    return absl::ResourceExhaustedError("libpq could not allocate a connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = TrimmedPgMessage(PQerrorMessage(conn));
    PQfinish(conn);
    std::string message = absl::StrCat("cannot connect to PostgreSQL (",
                                       RedactConninfo(conninfo), "): ", why);
    if (IsPermanentConnectFailure(why)) return absl::FailedPreconditionError(message);
    return absl::UnavailableError(message);
  }
  return std::unique_ptr<SqlConnection>(new SqlConnection(conn));
}

SqlConnection::~SqlConnection() { PQfinish(conn_); }

int SqlConnection::server_version() const { return PQserverVersion(conn_); }

absl::Status SqlConnection::ConnectionError(absl::string_view what) const {
  return absl::UnavailableError(
      absl::StrCat(what, ": ", TrimmedPgMessage(PQerrorMessage(conn_))));
}

std::string SqlConnection::Quote(absl::string_view identifier) {
  std::string in(identifier);
  char* q = PQescapeIdentifier(conn_, in.c_str(), in.size());
  std::string out = q == nullptr ? "\"\"" : q;
  PQfreemem(q);
  return out;
}

std::string SqlConnection::Literal(absl::string_view text) {
  std::string in(text);
  char* q = PQescapeLiteral(conn_, in.c_str(), in.size());
  std::string out = q == nullptr ? "''" : q;
  PQfreemem(q);
  return out;
}

absl::Status SqlConnection::AwaitResult(absl::Time deadline) {
  while (PQisBusy(conn_)) {
    int fd = PQsocket(conn_);
    if (fd < 0) return ConnectionError("the connection is gone");
    int wait_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      wait_ms = static_cast<int>(std::clamp<int64_t>(
          absl::ToInt64Milliseconds(deadline - absl::Now()), 0, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0)
      return absl::UnavailableError("poll on the PostgreSQL connection failed");
    if (ready == 0) {
      return absl::UnavailableError(absl::StrCat(
          "PostgreSQL did not answer within ", absl::FormatDuration(answer_timeout_),
          ": the connection is silent or the server is stuck"));
    }
    if (PQconsumeInput(conn_) == 0) return ConnectionError("reading the answer failed");
  }
  return absl::OkStatus();
}

absl::StatusOr<PgResult> SqlConnection::Execute(const std::string& sql) {
  if (PQsendQuery(conn_, sql.c_str()) == 0)
    return ConnectionError("sending a statement failed");
  absl::Time deadline = answer_timeout_ == absl::InfiniteDuration()
                            ? absl::InfiniteFuture()
                            : absl::Now() + answer_timeout_;
  // As PQexec: the last result counts; the copy protocol ends the statement's
  // results.
  PgResult last;
  while (true) {
    RETURN_IF_ERROR(AwaitResult(deadline));
    PGresult* next = PQgetResult(conn_);
    if (next == nullptr) break;
    last.reset(next);
    ExecStatusType st = PQresultStatus(next);
    if (st == PGRES_COPY_BOTH || st == PGRES_COPY_IN || st == PGRES_COPY_OUT) break;
  }
  if (last == nullptr) return ConnectionError("the statement returned nothing");
  return last;
}

absl::Status SqlConnection::ResultStatus(const PGresult* r) const {
  ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) return absl::OkStatus();
  std::string state = ResultSqlState(r);
  std::string message = absl::StrCat(TrimmedPgMessage(PQresultErrorMessage(r)),
                                     " (SQLSTATE ", state.empty() ? "none" : state, ")");
  if (PQstatus(conn_) != CONNECTION_OK) return absl::UnavailableError(message);
  if (state == kDuplicateObject) return absl::AlreadyExistsError(message);
  if (state == kUndefinedTable) return absl::NotFoundError(message);
  if (state == kSerializationFailure || state == kDeadlockDetected ||
      state == kLockNotAvailable)
    return absl::AbortedError(message);
  return absl::FailedPreconditionError(message);
}

absl::StatusOr<SqlRows> SqlConnection::Query(const std::string& sql) {
  ASSIGN_OR_RETURN(PgResult r, Execute(sql));
  RETURN_IF_ERROR(ResultStatus(r.get()));
  SqlRows rows(PQntuples(r.get()));
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    for (int j = 0; j < PQnfields(r.get()); ++j) {
      rows[i].push_back(PQgetisnull(r.get(), i, j)
                            ? std::nullopt
                            : std::optional<std::string>(PQgetvalue(r.get(), i, j)));
    }
  }
  return rows;
}

absl::Status SqlConnection::Command(const std::string& sql) {
  return Query(sql).status();
}

}  // namespace common

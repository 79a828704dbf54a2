// ReplicationStream: the walsender conversation over libpq. See the PostgreSQL docs
// "Streaming Replication Protocol" for the commands and the CopyBoth sub-protocol.
#include "cdc/replication_stream.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cdc/conninfo.h"
#include "cdc/pg_time.h"
#include "cdc/status_macros.h"

namespace cdc {
namespace {

// SQLSTATEs this file reacts to.
constexpr char kDuplicateObject[] = "42710";
constexpr char kUndefinedTable[] = "42P01";

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

std::string Trimmed(const char* message) {
  return std::string(absl::StripAsciiWhitespace(message == nullptr ? "" : message));
}

std::string SqlState(const PGresult* r) {
  const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  return s == nullptr ? "" : s;
}

// Server errors that end a stream or refuse to start one but may pass on their own:
// connection exceptions (08), operator intervention such as a shutdown or
// pg_terminate_backend (57), insufficient resources (53), and a slot still in use
// by another connection (55006, e.g. the other half of a hot-standby pair).
bool IsTransientServerError(absl::string_view sqlstate) {
  return sqlstate.empty() || absl::StartsWith(sqlstate, "08") || absl::StartsWith(sqlstate, "57") ||
         absl::StartsWith(sqlstate, "53") || sqlstate == "55006";
}

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

// Slot names are restricted by the server to lower-case letters, digits and '_'.
absl::Status ValidateSlotName(absl::string_view slot) {
  bool ok = !slot.empty() && slot.size() <= 63;
  for (char c : slot)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("invalid replication slot name \"", slot,
                   "\": use 1-63 lower-case letters, digits and underscores"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ReplicationStream>> ReplicationStream::Connect(
    const std::string& conninfo) {
  ASSIGN_OR_RETURN(ConnParams params, ParseConninfo(conninfo));
  params = WithParam(std::move(params), "replication", "database");
  bool has_app_name = std::any_of(params.begin(), params.end(), [](const auto& p) {
    return p.first == "application_name";
  });
  if (!has_app_name)
    params = WithParam(std::move(params), "application_name", "outbox-publisher");
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
    std::string why = Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    std::string message = absl::StrCat("cannot connect to PostgreSQL (",
                                       RedactConninfo(conninfo), "): ", why);
    if (IsPermanentConnectFailure(why)) return absl::FailedPreconditionError(message);
    return absl::UnavailableError(message);
  }
  return std::unique_ptr<ReplicationStream>(new ReplicationStream(conn));
}

ReplicationStream::~ReplicationStream() {
  FreeBuffer();
  PQfinish(conn_);
}

int ReplicationStream::server_version() const { return PQserverVersion(conn_); }

void ReplicationStream::FreeBuffer() {
  if (buffer_ != nullptr) PQfreemem(buffer_);
  buffer_ = nullptr;
}

absl::Status ReplicationStream::ConnectionError(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", Trimmed(PQerrorMessage(conn_))));
}

std::string ReplicationStream::Quote(absl::string_view identifier) {
  std::string in(identifier);
  char* q = PQescapeIdentifier(conn_, in.c_str(), in.size());
  std::string out = q == nullptr ? "\"\"" : q;
  PQfreemem(q);
  return out;
}

std::string ReplicationStream::Literal(absl::string_view text) {
  std::string in(text);
  char* q = PQescapeLiteral(conn_, in.c_str(), in.size());
  std::string out = q == nullptr ? "''" : q;
  PQfreemem(q);
  return out;
}

absl::StatusOr<std::vector<std::vector<std::optional<std::string>>>>
ReplicationStream::Query(const std::string& sql) {
  Result r(PQexec(conn_, sql.c_str()));
  if (r == nullptr) return ConnectionError("query failed");
  ExecStatusType st = PQresultStatus(r.get());
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    std::string state = SqlState(r.get());
    std::string message =
        absl::StrCat(Trimmed(PQresultErrorMessage(r.get())), " (SQLSTATE ",
                     state.empty() ? "none" : state, ")");
    if (PQstatus(conn_) != CONNECTION_OK) return absl::UnavailableError(message);
    if (state == kDuplicateObject) return absl::AlreadyExistsError(message);
    if (state == kUndefinedTable) return absl::NotFoundError(message);
    return absl::FailedPreconditionError(message);
  }
  std::vector<std::vector<std::optional<std::string>>> rows(PQntuples(r.get()));
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    for (int j = 0; j < PQnfields(r.get()); ++j) {
      rows[i].push_back(PQgetisnull(r.get(), i, j)
                            ? std::nullopt
                            : std::optional<std::string>(PQgetvalue(r.get(), i, j)));
    }
  }
  return rows;
}

absl::Status ReplicationStream::Command(const std::string& sql) {
  return Query(sql).status();
}

absl::StatusOr<SystemIdentity> ReplicationStream::IdentifySystem() {
  ASSIGN_OR_RETURN(auto rows, Query("IDENTIFY_SYSTEM"));
  if (rows.size() != 1 || rows[0].size() < 4 || !rows[0][1] || !rows[0][2]) {
    return absl::DataLossError("IDENTIFY_SYSTEM returned an unexpected shape");
  }
  SystemIdentity id;
  id.system_id = rows[0][0].value_or("");
  id.timeline = static_cast<uint32_t>(std::strtoul(rows[0][1]->c_str(), nullptr, 10));
  ASSIGN_OR_RETURN(id.xlog_pos, Lsn::Parse(*rows[0][2]));
  id.database = rows[0][3].value_or("");
  return id;
}

absl::Status ReplicationStream::CheckWalLevel() {
  ASSIGN_OR_RETURN(auto rows, Query("SHOW wal_level"));
  std::string level = rows.empty() || rows[0].empty() ? "" : rows[0][0].value_or("");
  if (level == "logical") return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("wal_level is '", level,
                   "', logical decoding needs 'logical': run ALTER SYSTEM SET "
                   "wal_level = logical and restart PostgreSQL"));
}

absl::Status ReplicationStream::EnsurePublication(const std::string& name,
                                                  const std::vector<std::string>& tables,
                                                  bool create) {
  std::vector<std::string> quoted;
  for (const std::string& table : tables) {
    std::vector<std::string> parts;
    for (absl::string_view part : absl::StrSplit(table, '.'))
      parts.push_back(Quote(part));
    quoted.push_back(absl::StrJoin(parts, "."));
  }
  ASSIGN_OR_RETURN(auto rows, Query(absl::StrCat(
                                  "SELECT pubinsert FROM pg_catalog.pg_publication WHERE "
                                  "pubname = ",
                                  Literal(name))));
  if (!rows.empty()) {
    if (rows[0][0].value_or("f") != "t") {
      return absl::FailedPreconditionError(
          absl::StrCat("publication \"", name,
                       "\" does not publish INSERTs: ALTER "
                       "PUBLICATION ",
                       Quote(name), " SET (publish = 'insert')"));
    }
    for (size_t i = 0; i < tables.size(); ++i) {
      std::vector<std::string> parts = absl::StrSplit(tables[i], '.');
      if (parts.size() != 2) continue;
      ASSIGN_OR_RETURN(
          auto member,
          Query(absl::StrCat("SELECT 1 FROM pg_catalog.pg_publication_tables "
                             "WHERE pubname = ",
                             Literal(name), " AND schemaname = ", Literal(parts[0]),
                             " AND tablename = ", Literal(parts[1]))));
      if (member.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("publication \"", name, "\" does not include table ", tables[i],
                         ": ALTER PUBLICATION ", Quote(name), " ADD TABLE ", quoted[i]));
      }
    }
    return absl::OkStatus();
  }
  std::string create_sql =
      absl::StrCat("CREATE PUBLICATION ", Quote(name), " FOR TABLE ",
                   absl::StrJoin(quoted, ", "), " WITH (publish = 'insert')");
  if (!create) {
    return absl::FailedPreconditionError(
        absl::StrCat("publication \"", name, "\" does not exist: create it (", create_sql,
                     ") or allow the publisher to create it"));
  }
  if (tables.empty()) return absl::InvalidArgumentError("no outbox table to publish");
  absl::Status s = Command(create_sql);
  if (absl::IsAlreadyExists(s)) return absl::OkStatus();  // Created concurrently.
  if (absl::IsNotFound(s)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create publication \"", name, "\": ", s.message(),
        ": create the outbox table first (scripts/schema.sql) or fix the table name"));
  }
  return s;
}

absl::StatusOr<pgoutput::Relation> ReplicationStream::DescribeTable(
    const std::string& schema, const std::string& table) {
  std::string qualified = absl::StrCat(Quote(schema), ".", Quote(table));
  ASSIGN_OR_RETURN(
      auto rows,
      Query(absl::StrCat(
          "SELECT c.oid, a.attname, a.atttypid, a.atttypmod FROM pg_catalog.pg_class c "
          "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
          "LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 "
          "AND NOT a.attisdropped WHERE n.nspname = ",
          Literal(schema), " AND c.relname = ", Literal(table),
          " AND c.relkind IN ('r', 'p') ORDER BY a.attnum")));
  if (rows.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", qualified,
                     " does not exist: create it (scripts/schema.sql) or fix --table"));
  }
  pgoutput::Relation r;
  r.oid =
      static_cast<uint32_t>(std::strtoul(rows[0][0].value_or("0").c_str(), nullptr, 10));
  r.schema = schema;
  r.name = table;
  r.replica_identity = 'd';
  for (const auto& row : rows) {
    if (!row[1]) continue;  // A table without columns.
    r.columns.push_back(
        {0, *row[1], static_cast<uint32_t>(std::strtoul(row[2]->c_str(), nullptr, 10)),
         static_cast<int32_t>(std::strtol(row[3]->c_str(), nullptr, 10))});
  }
  return r;
}

absl::Status ReplicationStream::EnsureSlot(const std::string& slot, bool create) {
  RETURN_IF_ERROR(ValidateSlotName(slot));
  for (int attempt = 0; attempt < 2; ++attempt) {
    ASSIGN_OR_RETURN(
        auto rows,
        Query(absl::StrCat(
            "SELECT slot_type, plugin, database, wal_status, current_database() "
            "FROM pg_catalog.pg_replication_slots WHERE slot_name = ",
            Literal(slot))));
    if (!rows.empty()) {
      const auto& r = rows[0];
      std::string type = r[0].value_or(""), plugin = r[1].value_or("");
      std::string database = r[2].value_or(""), wal_status = r[3].value_or("");
      std::string here = r[4].value_or("");
      std::string drop =
          absl::StrCat("SELECT pg_drop_replication_slot(", Literal(slot), ")");
      if (type != "logical") {
        return absl::FailedPreconditionError(
            absl::StrCat("replication slot \"", slot, "\" is a ", type,
                         " slot, not logical: choose "
                         "another slot name or drop it (",
                         drop, ")"));
      }
      if (plugin != "pgoutput") {
        return absl::FailedPreconditionError(
            absl::StrCat("replication slot \"", slot, "\" uses plugin ", plugin,
                         ", not pgoutput: choose "
                         "another slot name or drop it (",
                         drop, ")"));
      }
      if (database != here) {
        return absl::FailedPreconditionError(
            absl::StrCat("replication slot \"", slot, "\" belongs to database \"",
                         database, "\", not \"", here,
                         "\": connect to that database or choose another slot name"));
      }
      if (wal_status == "lost") {
        return absl::FailedPreconditionError(absl::StrCat(
            "replication slot \"", slot,
            "\" has lost WAL it still needed (wal_status = "
            "lost, see max_slot_wal_keep_size): events committed meanwhile are gone from "
            "the WAL; drop and recreate the slot (",
            drop, ") and re-publish from the table"));
      }
      return absl::OkStatus();
    }
    if (!create) {
      return absl::FailedPreconditionError(
          absl::StrCat("replication slot \"", slot,
                       "\" does not exist: create it (SELECT "
                       "pg_create_logical_replication_slot(",
                       Literal(slot),
                       ", 'pgoutput')) or allow the "
                       "publisher to create it"));
    }
    absl::Status s = Command(absl::StrCat("CREATE_REPLICATION_SLOT ", Quote(slot),
                                          " LOGICAL pgoutput NOEXPORT_SNAPSHOT"));
    if (s.ok()) return s;
    if (!absl::IsAlreadyExists(s)) return s;
    // Another process created it between our check and CREATE: check it again.
  }
  return absl::AbortedError(
      absl::StrCat("replication slot \"", slot, "\" keeps changing"));
}

absl::Status ReplicationStream::Start(const StartOptions& options) {
  RETURN_IF_ERROR(ValidateSlotName(options.slot));
  if (options.publications.empty()) {
    return absl::InvalidArgumentError("START_REPLICATION needs at least one publication");
  }
  std::vector<std::string> pubs;
  for (const std::string& p : options.publications) pubs.push_back(Quote(p));
  std::vector<std::string> opts = {
      absl::StrCat("proto_version '", options.proto_version, "'"),
      absl::StrCat("publication_names ", Literal(absl::StrJoin(pubs, ",")))};
  if (options.messages) opts.push_back("messages 'true'");
  if (options.streaming) opts.push_back("streaming 'on'");
  if (options.binary) opts.push_back("binary 'true'");
  std::string sql =
      absl::StrCat("START_REPLICATION SLOT ", Quote(options.slot), " LOGICAL ",
                   options.start_lsn.ToString(), " (", absl::StrJoin(opts, ", "), ")");
  Result r(PQexec(conn_, sql.c_str()));
  if (r == nullptr) return ConnectionError("START_REPLICATION failed");
  if (PQresultStatus(r.get()) != PGRES_COPY_BOTH) {
    std::string message = absl::StrCat("START_REPLICATION failed: ",
                                       Trimmed(PQresultErrorMessage(r.get())));
    if (PQstatus(conn_) != CONNECTION_OK || IsTransientServerError(SqlState(r.get()))) {
      return absl::UnavailableError(message);
    }
    return absl::FailedPreconditionError(message);
  }
  streaming_ = true;
  flush_ = std::max(flush_, options.start_lsn);
  return absl::OkStatus();
}

absl::Status ReplicationStream::WaitSocket(absl::Time deadline, bool* ready) {
  int fd = PQsocket(conn_);
  if (fd < 0) return ConnectionError("replication connection lost");
  while (true) {
    absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
    pollfd p{fd, POLLIN, 0};
    int timeout_ms = static_cast<int>(
        absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))));
    int n = poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    *ready = n > 0;
    return absl::OkStatus();
  }
}

absl::StatusOr<std::optional<ServerMessage>> ReplicationStream::Read(
    absl::Time deadline) {
  if (!streaming_) return absl::FailedPreconditionError("Read before Start");
  bool napped = false;
  while (true) {
    FreeBuffer();
    int n = PQgetCopyData(conn_, &buffer_, /*async=*/1);
    if (n > 0) {
      ASSIGN_OR_RETURN(ServerMessage m,
                       ParseServerMessage(absl::string_view(buffer_, n)));
      if (auto* x = std::get_if<XLogData>(&m)) {
        received_ = std::max(received_, x->wal_end);
      } else if (auto* k = std::get_if<Keepalive>(&m)) {
        received_ = std::max(received_, k->wal_end);
        if (k->reply_requested) RETURN_IF_ERROR(SendStatus(flush_, false));
      }
      return std::optional<ServerMessage>(m);
    }
    if (n == -1) {
      streaming_ = false;
      Result r(PQgetResult(conn_));
      std::string why = r ? Trimmed(PQresultErrorMessage(r.get())) : "";
      std::string message =
          absl::StrCat("server ended the replication stream", why.empty() ? "" : ": ", why);
      // A dropped publication or removed WAL will not fix itself by reconnecting.
      if (r && !IsTransientServerError(SqlState(r.get())) && PQstatus(conn_) == CONNECTION_OK) {
        return absl::FailedPreconditionError(message);
      }
      return absl::UnavailableError(message);
    }
    if (n == -2) return ConnectionError("replication stream read failed");
    // Nothing buffered. Mid-backlog the walsender sends every message as a segment
    // of its own; a reader that wakes for each one spends its time in the kernel and,
    // on a small machine, takes the CPU the walsender needs to send more. A short nap
    // lets a batch gather, read by one recv. Once per call, and never past the
    // deadline: it adds at most read_coalesce to a message's latency.
    if (!napped && read_coalesce_ > absl::ZeroDuration() &&
        absl::Now() + read_coalesce_ < deadline) {
      napped = true;
      absl::SleepFor(read_coalesce_);
      if (PQconsumeInput(conn_) == 0)
        return ConnectionError("replication stream read failed");
      continue;
    }
    bool ready = false;
    RETURN_IF_ERROR(WaitSocket(deadline, &ready));
    if (!ready) return std::optional<ServerMessage>();
    if (PQconsumeInput(conn_) == 0)
      return ConnectionError("replication stream read failed");
  }
}

absl::Status ReplicationStream::SendStatus(Lsn flush, bool reply_requested) {
  if (!streaming_) return absl::FailedPreconditionError("SendStatus before Start");
  flush_ = std::max(flush_, flush);
  std::string bytes = BuildStandbyStatus({std::max(received_, flush_), flush_, flush_,
                                          ToPgTimestamp(absl::Now()), reply_requested});
  if (PQputCopyData(conn_, bytes.data(), static_cast<int>(bytes.size())) != 1 ||
      PQflush(conn_) != 0) {
    return ConnectionError("sending standby status update failed");
  }
  return absl::OkStatus();
}

absl::Status ReplicationStream::Stop(absl::Time deadline) {
  FreeBuffer();
  if (!streaming_) return absl::OkStatus();
  streaming_ = false;
  if (PQputCopyEnd(conn_, nullptr) != 1 || PQflush(conn_) != 0) {
    return ConnectionError("ending the replication stream failed");
  }
  // Drain what the server sent before it saw our CopyDone, then its CopyDone.
  while (true) {
    int n = PQgetCopyData(conn_, &buffer_, /*async=*/1);
    FreeBuffer();
    if (n > 0) continue;
    if (n == -1) break;
    if (n == -2) return ConnectionError("ending the replication stream failed");
    bool ready = false;
    RETURN_IF_ERROR(WaitSocket(deadline, &ready));
    if (!ready)
      return absl::DeadlineExceededError("server did not end the replication stream");
    if (PQconsumeInput(conn_) == 0)
      return ConnectionError("ending the replication stream failed");
  }
  // Collect the command's results without blocking past the deadline.
  while (true) {
    while (PQisBusy(conn_)) {
      bool ready = false;
      RETURN_IF_ERROR(WaitSocket(deadline, &ready));
      if (!ready)
        return absl::DeadlineExceededError("server did not finish START_REPLICATION");
      if (PQconsumeInput(conn_) == 0)
        return ConnectionError("ending the replication stream failed");
    }
    Result r(PQgetResult(conn_));
    if (r == nullptr) return absl::OkStatus();
    ExecStatusType st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      return absl::UnavailableError(
          absl::StrCat("replication stream ended with an error: ",
                       Trimmed(PQresultErrorMessage(r.get()))));
    }
  }
}

}  // namespace cdc

// PgCluster: runs pg_cluster.sh and talks SQL to the result over libpq.
#include "tools/harness/pg_cluster.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/harness/shell.h"

namespace harness {

PgSession::~PgSession() { PQfinish(conn_); }

absl::StatusOr<Rows> PgSession::Exec(const std::string& sql) {
  if (PQsendQuery(conn_, sql.c_str()) != 1) {
    return absl::UnavailableError(PQerrorMessage(conn_));
  }
  Rows rows;
  std::string error;
  while (PGresult* r = PQgetResult(conn_)) {
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_TUPLES_OK) {
      rows.assign(PQntuples(r), {});
      for (int i = 0; i < PQntuples(r); ++i) {
        for (int j = 0; j < PQnfields(r); ++j) {
          rows[i].push_back(PQgetisnull(r, i, j)
                                ? std::nullopt
                                : std::optional<std::string>(PQgetvalue(r, i, j)));
        }
      }
    } else if (st == PGRES_COMMAND_OK) {
      rows.clear();
    } else if (error.empty()) {
      error = absl::StrCat(absl::StripAsciiWhitespace(PQresultErrorMessage(r)), " [", sql,
                           "]");
    }
    PQclear(r);
  }
  if (!error.empty()) return absl::FailedPreconditionError(error);
  return rows;
}

absl::StatusOr<std::string> PgSession::Value(const std::string& sql) {
  absl::StatusOr<Rows> rows = Exec(sql);
  if (!rows.ok()) return rows.status();
  if (rows->empty() || rows->front().empty() || !rows->front()[0]) {
    return absl::NotFoundError("no value from: " + sql);
  }
  return *rows->front()[0];
}

namespace {

std::string Script() { return HarnessPath("pg_cluster.sh"); }

void AppendSettings(const std::vector<std::string>& settings, std::string* command) {
  for (const std::string& s : settings) absl::StrAppend(command, " -c ", s);
}

// The cluster a `start` or `start-standby` printed.
absl::StatusOr<std::pair<std::string, int>> StartedCluster(const std::string& out) {
  std::string dir = OutputValue(out, "PG_CLUSTER_DIR");
  int port = 0;
  if (!absl::SimpleAtoi(OutputValue(out, "PGPORT"), &port)) port = 0;
  if (dir.empty() || port == 0)
    return absl::InternalError("unexpected pg_cluster.sh output: " + out);
  return std::make_pair(dir, port);
}

// Polls `sql` on `cluster` until it returns "t", for up to `seconds`.
absl::Status WaitTrue(PgCluster& cluster, const std::string& sql, int seconds,
                      const std::string& what) {
  for (int i = 0; i < seconds * 10; ++i) {
    absl::StatusOr<std::string> v = cluster.Value(sql);
    if (v.ok() && *v == "t") return absl::OkStatus();
    usleep(100 * 1000);
  }
  return absl::DeadlineExceededError(absl::StrCat("timed out waiting for ", what));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgCluster>> PgCluster::Start(
    const std::vector<std::string>& settings, int version) {
  std::string command = absl::StrCat(Script(), " start --owner ", getpid());
  if (version != 0) absl::StrAppend(&command, " --version ", version);
  AppendSettings(settings, &command);
  absl::StatusOr<std::string> out = RunCommand(command);
  if (!out.ok()) return out.status();
  absl::StatusOr<std::pair<std::string, int>> started = StartedCluster(*out);
  if (!started.ok()) return started.status();
  return std::unique_ptr<PgCluster>(new PgCluster(started->first, started->second));
}

absl::StatusOr<std::unique_ptr<PgCluster>> PgCluster::StartStandby(
    PgCluster& primary, const std::string& slot, const std::vector<std::string>& settings,
    int port) {
  absl::StatusOr<int> major = primary.MajorVersion();
  if (!major.ok()) return major.status();
  absl::StatusOr<std::unique_ptr<PgSession>> session = primary.Connect();
  if (!session.ok()) return session.status();
  PgSession& s = **session;
  // The slot keeps the WAL from the backup's start until the standby streams it.
  absl::Status made =
      s.Exec(absl::StrCat("SELECT pg_create_physical_replication_slot('", slot,
                          "', true) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots "
                          "WHERE slot_name = '",
                          slot, "')"))
          .status();
  if (!made.ok()) return made;
  // A non-exclusive online backup, as pg_basebackup makes (which the prebuilt
  // servers lack): start, copy the files, stop; its label goes into the copy.
  bool v15 = *major >= 15;
  absl::Status begun =
      s.Exec(v15 ? "SELECT pg_backup_start('outbox-standby', true)"
                 : "SELECT pg_start_backup('outbox-standby', true, false)")
          .status();
  if (!begun.ok()) return begun;
  absl::StatusOr<std::string> cloned =
      RunCommand(absl::StrCat(Script(), " clone ", primary.dir(), " --owner ", getpid()));
  absl::StatusOr<std::string> label =
      s.Value(v15 ? "SELECT labelfile FROM pg_backup_stop(true)"
                  : "SELECT labelfile FROM pg_stop_backup(false, true)");
  if (!cloned.ok()) return cloned.status();
  if (!label.ok()) return label.status();
  std::string dir = OutputValue(*cloned, "PG_CLUSTER_DIR");
  if (dir.empty()) return absl::InternalError("unexpected clone output: " + *cloned);
  std::string label_path = absl::StrCat(dir, "/backup_label.new");
  if (FILE* f = std::fopen(label_path.c_str(), "w")) {
    std::fwrite(label->data(), 1, label->size(), f);
    std::fclose(f);
  } else {
    return absl::InternalError("cannot write " + label_path);
  }
  std::string command =
      absl::StrCat(Script(), " start-standby ", dir, " --primary-port ", primary.port(),
                   " --slot ", slot, " --label ", label_path);
  if (port != 0) absl::StrAppend(&command, " --port ", port);
  std::vector<std::string> all = settings;
  if (*major >= 17) all.push_back("sync_replication_slots=on");
  AppendSettings(all, &command);
  absl::StatusOr<std::string> out = RunCommand(command);
  if (!out.ok()) return out.status();
  absl::StatusOr<std::pair<std::string, int>> started = StartedCluster(*out);
  if (!started.ok()) return started.status();
  auto standby =
      std::unique_ptr<PgCluster>(new PgCluster(started->first, started->second));
  absl::Status streaming = WaitTrue(
      primary,
      absl::StrCat("SELECT active FROM pg_replication_slots WHERE slot_name = '", slot,
                   "'"),
      60, "the standby to stream");
  if (!streaming.ok()) return streaming;
  return standby;
}

PgCluster::~PgCluster() {
  RunCommand(absl::StrCat(Script(), " stop ", dir_)).IgnoreError();
}

std::string PgCluster::conninfo(const std::string& database) const {
  return absl::StrCat("host=127.0.0.1 port=", port_, " user=postgres dbname=", database,
                      " connect_timeout=10");
}

std::string PgCluster::uri(const std::string& database) const {
  return absl::StrCat("postgresql://postgres@127.0.0.1:", port_, "/", database,
                      "?connect_timeout=10");
}

absl::StatusOr<std::unique_ptr<PgSession>> PgCluster::Connect(
    const std::string& database) {
  return ConnectTo(conninfo(database));
}

absl::StatusOr<std::unique_ptr<PgSession>> ConnectTo(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = PQerrorMessage(conn);
    PQfinish(conn);
    return absl::UnavailableError(why);
  }
  return std::make_unique<PgSession>(conn);
}

absl::StatusOr<Rows> PgCluster::Exec(const std::string& sql) {
  auto session = Connect();
  if (!session.ok()) return session.status();
  return (*session)->Exec(sql);
}

absl::StatusOr<std::string> PgCluster::Value(const std::string& sql) {
  auto session = Connect();
  if (!session.ok()) return session.status();
  return (*session)->Value(sql);
}

absl::Status PgCluster::Restart(const std::string& mode) {
  return RunCommand(absl::StrCat(Script(), " restart ", dir_, " ", mode)).status();
}

absl::Status PgCluster::Kill() {
  return RunCommand(absl::StrCat(Script(), " kill ", dir_)).status();
}

absl::Status PgCluster::Resume() {
  return RunCommand(absl::StrCat(Script(), " resume ", dir_)).status();
}

absl::Status PgCluster::Promote() {
  absl::Status s =
      RunCommand(absl::StrCat(Script(), " pgctl ", dir_, " promote -w -t 60 >/dev/null"))
          .status();
  if (!s.ok()) return s;
  return WaitTrue(*this, "SELECT NOT pg_is_in_recovery()", 60, "the promotion");
}

absl::StatusOr<int> PgCluster::MajorVersion() {
  absl::StatusOr<std::string> v = Value("SHOW server_version_num");
  if (!v.ok()) return v.status();
  int n = 0;
  if (!absl::SimpleAtoi(*v, &n)) return absl::InternalError("bad version " + *v);
  return n / 10000;
}

}  // namespace harness

// PgCluster: runs pg_cluster.sh and talks SQL to the result over libpq.
#include "tests/harness/pg_cluster.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/harness/shell.h"

namespace testing_harness {

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

absl::StatusOr<std::unique_ptr<PgCluster>> PgCluster::Start(
    const std::vector<std::string>& settings) {
  std::string command =
      absl::StrCat(HarnessPath("pg_cluster.sh"), " start --owner ", getpid());
  for (const std::string& s : settings) absl::StrAppend(&command, " -c ", s);
  absl::StatusOr<std::string> out = RunCommand(command);
  if (!out.ok()) return out.status();
  std::string dir = OutputValue(*out, "PG_CLUSTER_DIR");
  int port = 0;
  if (!absl::SimpleAtoi(OutputValue(*out, "PGPORT"), &port)) port = 0;
  if (dir.empty() || port == 0)
    return absl::InternalError("unexpected pg_cluster.sh output: " + *out);
  return std::unique_ptr<PgCluster>(new PgCluster(dir, port));
}

PgCluster::~PgCluster() {
  RunCommand(absl::StrCat(HarnessPath("pg_cluster.sh"), " stop ", dir_)).IgnoreError();
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
  PGconn* conn = PQconnectdb(conninfo(database).c_str());
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
  return RunCommand(
             absl::StrCat(HarnessPath("pg_cluster.sh"), " restart ", dir_, " ", mode))
      .status();
}

}  // namespace testing_harness

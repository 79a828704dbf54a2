// PgDatabase: transactions over cdc::SqlConnection, reconnecting when needed.
#include "consumer/postgres/pg_database.h"

#include <libpq-fe.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace consumer {
namespace {

constexpr absl::Duration kAnswerTimeout = absl::Seconds(30);
constexpr int kConnectTimeoutSeconds = 10;

}  // namespace

absl::StatusOr<std::unique_ptr<PgDatabase>> PgDatabase::Connect(
    std::string conninfo, std::string application_name) {
  std::unique_ptr<PgDatabase> db(
      new PgDatabase(std::move(conninfo), std::move(application_name)));
  if (absl::Status s = db->EnsureConnected(); !s.ok()) return s;
  return db;
}

absl::Status PgDatabase::EnsureConnected() {
  if (conn_ != nullptr) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<common::SqlConnection>> c =
      common::SqlConnection::Connect(conninfo_, common::SqlConnection::Mode::kPlain,
                                     application_name_, kConnectTimeoutSeconds);
  if (!c.ok()) {
    lost_ = true;
    return absl::IsUnavailable(c.status()) ? c.status()
                                           : absl::UnavailableError(c.status().message());
  }
  conn_ = std::move(*c);
  conn_->set_answer_timeout(kAnswerTimeout);
  // NOTICEs ("relation ... already exists, skipping") are not the service's
  // business: libpq would print them on stderr.
  PQsetNoticeProcessor(
      conn_->raw(), [](void*, const char*) {}, nullptr);
  return absl::OkStatus();
}

absl::Status PgDatabase::Check(absl::Status s) {
  if (absl::IsUnavailable(s)) {
    // Broken, or left mid-statement by the answer timeout: make a new one.
    lost_ = true;
    conn_.reset();
  }
  return s;
}

absl::Status PgDatabase::Begin() {
  if (absl::Status s = EnsureConnected(); !s.ok()) return s;
  lost_ = false;
  return Check(conn_->Command("BEGIN"));
}

absl::Status PgDatabase::Commit() {
  if (conn_ == nullptr) return absl::UnavailableError("the connection is gone");
  absl::StatusOr<common::PgResult> r = conn_->Execute("COMMIT");
  if (!r.ok()) return Check(r.status());
  if (absl::Status s = conn_->ResultStatus(r->get()); !s.ok()) return Check(s);
  // COMMIT of a transaction in which a statement failed rolls it back, and says
  // so only in its command tag: a handler that ignored an error must not count as
  // applied.
  if (std::string(PQcmdStatus(r->get())) != "COMMIT") {
    return absl::FailedPreconditionError(
        "the transaction was rolled back at COMMIT: a statement in it had failed "
        "(did the handler ignore an error?)");
  }
  return absl::OkStatus();
}

void PgDatabase::Rollback() {
  if (conn_ == nullptr) return;
  Check(conn_->Command("ROLLBACK")).IgnoreError();
}

absl::StatusOr<Rows> PgDatabase::Query(const std::string& sql) {
  if (absl::Status s = EnsureConnected(); !s.ok()) return s;
  absl::StatusOr<common::SqlRows> rows = conn_->Query(sql);
  if (!rows.ok()) return Check(rows.status());
  return std::move(*rows);
}

std::string PgDatabase::Literal(absl::string_view text) {
  if (conn_ != nullptr) return conn_->Literal(text);
  // No connection to ask: standard_conforming_strings (on since PostgreSQL 9.1)
  // makes doubling the quotes enough. The statement fails to run anyway.
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "''"}}), "'");
}

std::string PgDatabase::Identifier(absl::string_view identifier) {
  if (conn_ != nullptr) return conn_->Quote(identifier);
  return absl::StrCat("\"", absl::StrReplaceAll(identifier, {{"\"", "\"\""}}), "\"");
}

}  // namespace consumer

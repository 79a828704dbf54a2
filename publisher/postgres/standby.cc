// Standby: the reads and the waits of publishing from a standby.
#include "publisher/postgres/standby.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cdc/catalog_facts.h"
#include "cdc/postgres/catalog.h"
#include "common/status_macros.h"

namespace publisher {
namespace {

constexpr absl::Duration kNudgeEvery = absl::Seconds(1);
constexpr absl::Duration kSayEvery = absl::Seconds(10);
constexpr int kConnectTimeoutSeconds = 10;

// The one value of a one-row, one-column answer.
absl::StatusOr<std::string> OneValue(common::SqlConnection& sql,
                                     const std::string& query) {
  ASSIGN_OR_RETURN(common::SqlRows rows, sql.Query(query));
  if (rows.size() != 1 || rows[0].empty() || !rows[0][0]) {
    return absl::DataLossError(absl::StrCat("no value from: ", query));
  }
  return *rows[0][0];
}

}  // namespace

absl::StatusOr<bool> InRecovery(common::SqlConnection& sql) {
  ASSIGN_OR_RETURN(common::SqlRows rows,
                   sql.Query("SELECT pg_catalog.pg_is_in_recovery()"));
  if (rows.size() != 1 || rows[0].empty() || !rows[0][0]) {
    return absl::DataLossError("pg_is_in_recovery() returned nothing");
  }
  return *rows[0][0] == "t";
}

absl::StatusOr<std::unique_ptr<common::SqlConnection>> ConnectPrimary(
    const std::string& conninfo, const std::string& system_id, absl::Duration timeout) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<common::SqlConnection> primary,
      common::SqlConnection::Connect(conninfo, common::SqlConnection::Mode::kPlain,
                                     "outbox-publisher primary", kConnectTimeoutSeconds));
  primary->set_answer_timeout(timeout);
  ASSIGN_OR_RETURN(bool recovering, InRecovery(*primary));
  if (recovering) {
    return absl::FailedPreconditionError(
        "--pg-primary names a standby, not the primary: give the primary's conninfo "
        "(a multi-host one with target_session_attrs=read-write follows a failover)");
  }
  ASSIGN_OR_RETURN(std::string id, OneValue(*primary,
                                            "SELECT system_identifier::text FROM "
                                            "pg_catalog.pg_control_system()"));
  if (id != system_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("--pg-primary is another database system (system identifier ", id,
                     ") than the standby --pg names (", system_id,
                     "): give the primary this standby replicates from"));
  }
  return primary;
}

absl::Status EnsurePublicationOnStandby(
    common::SqlConnection& standby, common::SqlConnection* primary,
    const std::string& name, const std::vector<std::string>& tables, bool create,
    const std::optional<cdc::KeyShard>& shard, const std::string& key_column,
    absl::Duration wait) {
  std::vector<std::string> quoted = cdc::QuoteTables(standby, tables);
  std::string filter =
      shard ? cdc::ShardRowFilter(standby.Quote(key_column), *shard) : "";
  ASSIGN_OR_RETURN(cdc::PublicationFacts facts, cdc::ReadPublicationFacts(standby, name));
  if (!facts.exists) {
    if (primary == nullptr || !create) {
      return absl::FailedPreconditionError(absl::StrCat(
          "publication \"", name,
          "\" does not exist on this standby, and a standby cannot create one: run on "
          "the primary ",
          cdc::CreatePublicationSql(standby.Quote(name), quoted, filter),
          create ? ", or give --pg-primary and the publisher creates it there" : ""));
    }
    RETURN_IF_ERROR(
        cdc::EnsurePublication(*primary, name, tables, create, shard, key_column));
    // The standby has it once it replayed the primary's commit.
    absl::Time deadline = absl::Now() + wait;
    while (!facts.exists) {
      if (absl::Now() > deadline) {
        return absl::UnavailableError(
            absl::StrCat("created publication \"", name,
                         "\" on the primary, but this standby has not replayed it after ",
                         absl::FormatDuration(wait), ": is it replicating?"));
      }
      absl::SleepFor(absl::Milliseconds(100));
      ASSIGN_OR_RETURN(facts, cdc::ReadPublicationFacts(standby, name));
    }
  }
  return cdc::CheckPublication(facts, standby.Quote(name), tables, quoted,
                               /*create=*/false, filter);
}

StandbySnapshotNudge::StandbySnapshotNudge(std::string primary_conninfo, std::string slot,
                                           common::Logger& log)
    : conninfo_(std::move(primary_conninfo)), slot_(std::move(slot)), log_(log) {
  thread_ = std::thread([this] { Loop(); });
}

StandbySnapshotNudge::~StandbySnapshotNudge() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StandbySnapshotNudge::Loop() {
  absl::Time started = absl::Now();
  absl::Time said = started;
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, absl::ToChronoMilliseconds(kNudgeEvery),
                         [this] { return stop_; })) {
    lock.unlock();
    absl::Status nudged =
        conninfo_.empty() ? absl::FailedPreconditionError("no --pg-primary") : Nudge();
    absl::Time now = absl::Now();
    if (!nudged.ok() && now - said >= kSayEvery) {
      said = now;
      log_.Warn(
          "creating the slot on a standby waits for the primary to log its running "
          "transactions (every 15 s while it writes, never while idle): run SELECT "
          "pg_log_standby_snapshot() on the primary, or give --pg-primary",
          {{"slot", slot_},
           {"waited", absl::FormatDuration(absl::Trunc(now - started, absl::Seconds(1)))},
           {"primary", std::string(nudged.message())}});
    }
    lock.lock();
  }
}

absl::Status StandbySnapshotNudge::Nudge() {
  if (primary_ == nullptr) {
    absl::StatusOr<std::unique_ptr<common::SqlConnection>> c =
        common::SqlConnection::Connect(conninfo_, common::SqlConnection::Mode::kPlain,
                                       "outbox-publisher primary",
                                       kConnectTimeoutSeconds);
    if (!c.ok()) return c.status();
    primary_ = std::move(*c);
    primary_->set_answer_timeout(kSayEvery);
  }
  absl::Status s =
      primary_->Query("SELECT pg_catalog.pg_log_standby_snapshot()").status();
  if (!s.ok()) primary_.reset();
  return s;
}

}  // namespace publisher

// SlotWatcher: connect lazily, read, judge, act; sleep until the next interval.
#include "publisher/postgres/slot_watcher.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "cdc/key_shard.h"
#include "cdc/postgres/catalog.h"
#include "common/status_macros.h"
#include "publisher/postgres/slot_records.h"
#include "publisher/postgres/standby.h"

namespace publisher {
namespace {

// Bounds on a probe, so that a server that stopped answering cannot hold up a
// stop: the replication connection notices such a server anyway.
constexpr int kConnectTimeoutSeconds = 10;
constexpr char kStatementTimeout[] = "SET statement_timeout = '10s'";
constexpr absl::Duration kAnswerTimeout = absl::Seconds(15);

}  // namespace

SlotWatcher::SlotWatcher(SlotWatcherOptions options, common::Logger& log,
                         Metrics& metrics, ExternalFault& fault)
    : options_(std::move(options)), log_(log), metrics_(metrics), fault_(fault) {
  thread_ = std::thread([this] { Loop(); });
}

SlotWatcher::~SlotWatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SlotWatcher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, absl::ToChronoMilliseconds(options_.slot_check_interval),
                         [this] { return stop_; })) {
    if (!metrics_.relay().streaming || fault_.raised()) continue;
    lock.unlock();
    absl::Status s = Probe();
    if (!s.ok()) {
      sql_.reset();  // Connect again next time.
      primary_.reset();
      horizon_.Drop();  // Its server may not be the next connection's.
      log_.Debug("slot check failed; trying again at the next interval",
                 {{"error", std::string(s.message())}});
    }
    lock.lock();
  }
}

absl::Status SlotWatcher::Probe() {
  if (sql_ == nullptr) {
    ASSIGN_OR_RETURN(sql_, common::SqlConnection::Connect(
                               options_.source.pg, common::SqlConnection::Mode::kPlain,
                               "outbox-publisher slot check", kConnectTimeoutSeconds));
    // statement_timeout stops a stuck server; the answer timeout a connection that
    // went silent (which would otherwise also hang shutdown, which joins this).
    sql_->set_answer_timeout(kAnswerTimeout);
    RETURN_IF_ERROR(sql_->Command(kStatementTimeout));
  }
  ASSIGN_OR_RETURN(standby_, InRecovery(*sql_));
  if (!watch_) {
    std::vector<std::string> tables;
    for (const TableName& t : options_.source.tables) tables.push_back(t.qualified());
    ASSIGN_OR_RETURN(common::SqlRows here, sql_->Query("SELECT current_database()"));
    if (here.size() != 1 || here[0].empty() || !here[0][0])
      return absl::DataLossError("current_database() returned nothing");
    const OutboxSource& source = options_.source;
    watch_.emplace(
        *here[0][0], options_.max_retained_wal, sql_->Quote(source.publication), tables,
        cdc::QuoteTables(*sql_, tables), sql_->Literal(source.slot),
        source.shard ? cdc::ShardRowFilter(sql_->Quote(source.key_column), *source.shard)
                     : "");
  }
  CatalogFindings f;
  ASSIGN_OR_RETURN(f.slot, cdc::ReadSlotFacts(*sql_, options_.source.slot));
  for (const TableName& t : options_.source.tables) {
    ASSIGN_OR_RETURN(cdc::TableFacts table,
                     cdc::ReadTableFacts(*sql_, t.schema, t.table));
    f.tables.push_back(std::move(table));
  }
  ASSIGN_OR_RETURN(f.publication,
                   cdc::ReadPublicationFacts(*sql_, options_.source.publication));
  metrics_.SetSlotRetainedBytes(f.slot.retained_bytes);
  log_.Debug("slot checked", {{"slot", options_.source.slot},
                              {"wal_status", f.slot.wal_status},
                              {"retained_bytes", f.slot.retained_bytes.value_or(-1)}});
  WatchVerdict v = watch_->Judge(f);
  for (const std::string& w : v.warnings) log_.Warn(w, {{"slot", options_.source.slot}});
  for (const std::string& n : v.notes) log_.Info(n, {{"slot", options_.source.slot}});
  if (!v.fatal.ok()) fault_.Raise(v.fatal);
  // Never at the checks' expense: a horizon not recorded now is recorded later.
  if (absl::Status s = AdvanceHorizon(); !s.ok()) {
    horizon_.Drop();
    primary_.reset();  // It may be left mid-statement.
    log_.Debug("could not record the published horizon",
               {{"error", std::string(s.message())}});
  }
  return absl::OkStatus();
}

absl::Status SlotWatcher::AdvanceHorizon() {
  if (!options_.state_table) return absl::OkStatus();
  RelaySnapshot relay = metrics_.relay();
  RelayProgress progress{relay.stats.sessions, relay.stats.session_confirmed,
                         relay.stats.acknowledged};
  ASSIGN_OR_RETURN(common::SqlConnection * state, StateConnection());
  if (state == nullptr) return absl::OkStatus();
  if (std::optional<uint64_t> xid = horizon_.Due(progress)) {
    SlotRecords records(*state, *options_.state_table, options_.source.slot);
    RETURN_IF_ERROR(records.Advance(*xid));
    horizon_.Recorded();
    log_.Debug("recorded the published horizon", {{"below_xid", *xid}});
  }
  if (horizon_.wants_candidate()) {
    ASSIGN_OR_RETURN(auto candidate, ReadHorizonCandidate(*state));
    horizon_.Offer(candidate.first, candidate.second, progress);
  }
  return absl::OkStatus();
}

absl::StatusOr<common::SqlConnection*> SlotWatcher::StateConnection() {
  if (!standby_) return sql_.get();
  // A standby's slot: the record is on its primary, or kept nowhere.
  if (options_.source.pg_primary.empty()) return nullptr;
  if (primary_ == nullptr) {
    ASSIGN_OR_RETURN(primary_,
                     common::SqlConnection::Connect(
                         options_.source.pg_primary, common::SqlConnection::Mode::kPlain,
                         "outbox-publisher slot check", kConnectTimeoutSeconds));
    primary_->set_answer_timeout(kAnswerTimeout);
    RETURN_IF_ERROR(primary_->Command(kStatementTimeout));
  }
  return primary_.get();
}

}  // namespace publisher

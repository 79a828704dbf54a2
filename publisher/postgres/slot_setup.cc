// PrepareSlot: read, plan, act. Each step that changes something is logged.
#include "publisher/postgres/slot_setup.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cdc/catalog_facts.h"
#include "cdc/postgres/catalog.h"
#include "common/status_macros.h"
#include "publisher/mapping/mapper.h"
#include "publisher/postgres/outbox_rows.h"
#include "publisher/postgres/slot_records.h"
#include "publisher/postgres/standby.h"
#include "publisher/recovery/republisher.h"

namespace publisher {
namespace {

class SlotSetup {
 public:
  SlotSetup(cdc::ReplicationStream& stream, const PgSessionOptions& options,
            const std::string& database, common::Logger& log, SinkFactory* sinks,
            const SlotServers& servers)
      : sql_(stream.sql()),
        state_sql_(servers.primary != nullptr ? *servers.primary : stream.sql()),
        standby_(servers.standby),
        options_(options),
        database_(database),
        log_(log),
        sinks_(sinks) {
    if (options_.state_table && standby_ && servers.primary == nullptr) {
      log_.Warn(
          "publishing from a standby without --pg-primary: no state table, so a "
          "lost slot (a lost standby) would not be noticed",
          {{"slot", options_.source.slot}});
    } else if (options_.state_table) {
      records_.emplace(state_sql_, *options_.state_table, options_.source.slot);
    }
  }

  absl::Status Run() {
    const std::string& slot = options_.source.slot;
    RETURN_IF_ERROR(cdc::ValidateSlotName(slot));
    ASSIGN_OR_RETURN(cdc::SlotFacts facts, cdc::ReadSlotFacts(sql_, slot));
    // Another connection streams the slot (the other half of a pair): look, do not
    // ask for the stream, whose refusal is an ERROR line in the server's log every
    // few seconds. START_REPLICATION still answers 55006 if it is taken meanwhile.
    if (facts.exists && facts.active_pid) {
      return cdc::SlotInUseError(absl::StrCat("replication slot \"", slot,
                                              "\" is streamed by another connection "
                                              "(walsender PID ",
                                              *facts.active_pid, ")"));
    }
    SlotRecord record;
    if (records_) {
      // Without the table the publisher runs as it did before it had one (a role
      // that may not create it, --create=false): loudly, since a gap then goes
      // unnoticed.
      if (absl::Status s = records_->Ensure(options_.create); !s.ok()) {
        log_.Warn(
            "no state table: a lost slot or a failover without a failover slot "
            "would not be noticed",
            {{"error", std::string(s.message())}});
        records_.reset();
      }
    }
    if (records_) {
      ASSIGN_OR_RETURN(record, records_->Read());
    }
    SlotPlanInputs in;
    in.literal_slot = sql_.Literal(slot);
    in.database = database_;
    in.create = options_.create;
    in.on_gap = options_.on_slot_gap;
    in.state_table = records_ ? options_.state_table->qualified() : "";
    in.table_less = !options_.message_prefix.empty();
    ASSIGN_OR_RETURN(SlotPlan plan, PlanSlot(facts, record, in));

    if (plan.step == SlotPlan::Step::kStream) {
      if (plan.adopt) {
        // A slot from before the record: what it confirmed is not known, so a
        // later gap re-publishes every row until the watcher records a horizon.
        RETURN_IF_ERROR(records_->Write(std::nullopt, false));
        log_.Info("recorded the existing slot in the state table",
                  {{"slot", slot}, {"state_table", in.state_table}});
      }
      return MaybeEnableFailover(facts);
    }
    if (!plan.gap.empty()) {
      log_.Error(plan.step == SlotPlan::Step::kSkip
                     ? "a gap in the slot's history is skipped as --on-slot-gap=skip "
                       "says: events committed in it are not published"
                     : "closing a gap in the slot's history: re-publishing from the "
                       "outbox table",
                 {{"slot", slot}, {"gap", plan.gap}});
    }
    if (plan.drop_first && facts.exists) {
      RETURN_IF_ERROR(cdc::DropSlot(sql_, slot));
      log_.Warn("dropped the replication slot to create it anew", {{"slot", slot}});
      facts.exists = false;
    }
    if (plan.step == SlotPlan::Step::kRepublish) return Republish(record);
    // Create (or skip): nothing before the new slot is owed, so the horizon is a
    // snapshot taken before it.
    std::optional<uint64_t> horizon;
    if (records_) {
      ASSIGN_OR_RETURN(auto candidate, ReadHorizonCandidate(state_sql_));
      horizon = candidate.first;
    }
    if (!facts.exists) RETURN_IF_ERROR(Create(/*use_snapshot=*/false).status());
    if (records_) RETURN_IF_ERROR(records_->Write(horizon, false));
    return absl::OkStatus();
  }

 private:
  bool Failover() const {
    return options_.failover_slot && !standby_ &&
           sql_.server_version() >= cdc::kFailoverSlotsVersion;
  }

  absl::StatusOr<cdc::Lsn> Create(bool use_snapshot) {
    const std::string& slot = options_.source.slot;
    std::optional<StandbySnapshotNudge> nudge;
    if (standby_) nudge.emplace(options_.source.pg_primary, slot, log_);
    ASSIGN_OR_RETURN(cdc::Lsn at,
                     cdc::CreateSlot(sql_, slot, {Failover(), use_snapshot}));
    log_.Info(
        "created the replication slot",
        {{"slot", slot}, {"consistent_point", at.ToString()}, {"failover", Failover()}});
    return at;
  }

  absl::Status MaybeEnableFailover(const cdc::SlotFacts& facts) {
    if (!Failover() || facts.failover.value_or(true)) return absl::OkStatus();
    absl::Status s = cdc::EnableSlotFailover(sql_, options_.source.slot);
    if (!s.ok()) {
      // Not fatal: the slot streams as before; --check and this line say what a
      // promotion would lose.
      log_.Warn("cannot make the slot a failover slot: a standby will not carry it",
                {{"slot", options_.source.slot}, {"error", std::string(s.message())}});
      return absl::OkStatus();
    }
    log_.Info("made the existing slot a failover slot", {{"slot", options_.source.slot}});
    return absl::OkStatus();
  }

  // Creates the slot in a snapshot, re-publishes from it what the old slot may
  // not have confirmed, and records the new horizon. The record says
  // "recovering" from before the slot exists until everything is acknowledged, so
  // a crash in between begins again instead of streaming past the gap.
  absl::Status Republish(const SlotRecord& record) {
    if (sinks_ == nullptr) return absl::InternalError("no producer to re-publish with");
    RETURN_IF_ERROR(records_ ? records_->Write(record.published_below_xid, true)
                             : absl::OkStatus());
    ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, sinks_->Create(false));
    RETURN_IF_ERROR(sql_.Command("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
    absl::Status s = RepublishInSnapshot(record, *sink);
    if (!s.ok()) {
      sql_.Command("ROLLBACK").IgnoreError();
      return s;
    }
    return absl::OkStatus();
  }

  absl::Status RepublishInSnapshot(const SlotRecord& record, Sink& sink) {
    ASSIGN_OR_RETURN(cdc::Lsn at, Create(/*use_snapshot=*/true));
    ASSIGN_OR_RETURN(auto snapshot, ReadHorizonCandidate(sql_));
    RepublishLimits limits;
    limits.max_in_flight = options_.max_in_flight;
    Republisher republisher(sink, log_, limits);
    RowSource source;
    source.commit_time = absl::Now();
    source.database = database_;
    for (const TableName& t : options_.source.tables) {
      ASSIGN_OR_RETURN(cdc::pgoutput::Relation shape,
                       cdc::DescribeTable(sql_, t.schema, t.table));
      ASSIGN_OR_RETURN(BoundRelation bound,
                       BoundRelation::Bind(shape, options_.columns, options_.topic));
      ASSIGN_OR_RETURN(std::unique_ptr<OutboxRows> rows,
                       OutboxRows::Open(sql_, shape, record.published_below_xid));
      uint64_t before = republisher.published();
      RETURN_IF_ERROR(republisher.Publish(*rows, bound, source));
      log_.Info("re-publishing rows from the outbox table",
                {{"table", t.qualified()}, {"rows", republisher.published() - before}});
    }
    RETURN_IF_ERROR(republisher.Drain());
    RETURN_IF_ERROR(sql_.Command("COMMIT"));
    // Every transaction below the snapshot's xmin is now published: the rows it
    // saw by re-publishing, the rest by the old slot. The new slot streams the rest.
    if (records_) RETURN_IF_ERROR(records_->Write(snapshot.first, false));
    log_.Warn("re-published the gap from the outbox table; consumers deduplicate on id",
              {{"slot", options_.source.slot},
               {"rows", republisher.published()},
               {"acknowledged", republisher.acknowledged()},
               {"from_xid", record.published_below_xid
                                ? absl::StrCat(*record.published_below_xid)
                                : std::string("the first row")},
               {"slot_starts_at", at.ToString()}});
    return absl::OkStatus();
  }

  common::SqlConnection& sql_;        // The slot's server.
  common::SqlConnection& state_sql_;  // The state table's: the primary.
  const bool standby_;
  const PgSessionOptions& options_;
  const std::string& database_;
  common::Logger& log_;
  SinkFactory* sinks_;
  std::optional<SlotRecords> records_;
};

}  // namespace

absl::Status PrepareSlot(cdc::ReplicationStream& stream, const PgSessionOptions& options,
                         const std::string& database, common::Logger& log,
                         SinkFactory* republish_sinks, const SlotServers& servers) {
  return SlotSetup(stream, options, database, log, republish_sinks, servers).Run();
}

}  // namespace publisher

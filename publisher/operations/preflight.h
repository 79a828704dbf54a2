// Preflight: the judgements behind --check, beside the running verdicts that judge
// the same catalog facts (catalog_verdicts.h). Pure: the shells gather the facts
// (publisher/postgres/preflight_reads.h, publisher/kafka/preflight_reads.h); these
// functions turn them into one line per check, each either "ok" with what was
// found or "FAIL" with the problem and the fix. The catalog rules are
// cdc/catalog_facts.h's, shared with start-up. PostgreSQL's checks are in
// preflight_postgres.cc, Kafka's in preflight.cc.
#ifndef PUBLISHER_OPERATIONS_PREFLIGHT_H_
#define PUBLISHER_OPERATIONS_PREFLIGHT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cdc/catalog_facts.h"
#include "cdc/key_shard.h"
#include "publisher/mapping/columns.h"
#include "publisher/relay/relay_options.h"

namespace publisher {

// What --check checks against: the parts of the configuration its judgements and
// reads need (publisher/program/options.h builds it from the flags).
struct PreflightOptions {
  std::string slot, publication;
  // --shard: this publisher's shard, and the bases that name every shard's
  // publication and slot.
  std::optional<cdc::KeyShard> shard;
  std::string shard_publication_base, shard_slot_base;
  std::vector<TableName> tables;
  bool create = true;
  bool failover_slot = true;
  bool state_table = true;  // --state-table is not "".
  std::string pg_primary;   // --pg-primary, read when --pg is a standby.
  std::string brokers;
  std::string topic;  // The topic template.
  ColumnMapping columns;
  OnError on_error = OnError::kHalt;
  std::string dead_letter_topic;
  int64_t max_retained_wal = 0;
  bool exactly_once = false;
  std::string checkpoint_topic;
  std::string message_prefix;  // "" = no events without a table.
};

struct CheckLine {
  static CheckLine Ok(std::string what, std::string detail) {
    return {true, std::move(what), std::move(detail)};
  }
  static CheckLine Fail(std::string what, std::string detail) {
    return {false, std::move(what), std::move(detail)};
  }
  // Passes, but names a risk and how to remove it.
  static CheckLine Warn(std::string what, std::string detail) {
    return {true, std::move(what), std::move(detail), /*warning=*/true};
  }
  // Ok with `ok_detail`, or Fail with the status's message.
  static CheckLine From(std::string what, const absl::Status& s, std::string ok_detail) {
    if (s.ok()) return Ok(std::move(what), std::move(ok_detail));
    return Fail(std::move(what), std::string(s.message()));
  }

  bool ok = false;
  std::string what;    // "wal_level", "table public.outbox", ...
  std::string detail;  // What was found; for a FAIL, the problem and the fix.
  bool warning = false;
};

// "ok    what: detail", "warn  what: detail" or "FAIL  what: detail".
std::string FormatCheckLine(const CheckLine& line);

// What --check read from one other server of a multi-host --pg: whether it is a
// standby, and its copy of the slot.
struct StandbyFindings {
  std::string server;    // "host:port", for the line.
  absl::Status connect;  // Nothing else is read without it.
  bool in_recovery = false;
  absl::StatusOr<cdc::SlotFacts> slot = absl::UnknownError("not read");
};

// What --check read from PostgreSQL. A failed read is kept as its status.
// --shard: what every shard's publication filters, and whether together they select
// each sample key exactly once (cdc/key_shard.h).
struct ShardCoverage {
  int64_t samples = 0;
  int64_t unselected = 0;  // Keys no shard publishes: their rows would be lost.
  int64_t repeated = 0;    // Keys two shards publish: their order would break.
  std::optional<std::string> unselected_example, repeated_example;
};

struct ShardFindings {
  // Shard 1..N's publication, "<base>_<I>_of_<N>".
  std::vector<absl::StatusOr<cdc::PublicationFacts>> publications;
  // Shard 1..N's slot: rows written before a shard's slot exists reach no one.
  std::vector<absl::StatusOr<cdc::SlotFacts>> slots;
  // Per outbox table, in PreflightOptions::tables order.
  std::vector<absl::StatusOr<ShardCoverage>> coverage;
};

// What --check read when --pg is a standby (publishing from a standby): the
// settings that keep its slot valid, and through --pg-primary the primary's
// wal_level.
struct PublishingStandbyFindings {
  bool hot_standby_feedback = false;
  std::string primary_slot_name;  // "" = the standby streams without a physical slot.
  absl::StatusOr<std::string> primary_wal_level = absl::NotFoundError("no --pg-primary");
};

struct PgFindings {
  absl::Status connect;  // The plain connection; nothing else is read without it.
  absl::StatusOr<cdc::ServerFacts> server = absl::UnknownError("not read");
  absl::Status replication_connect;  // A replication=database connection.
  std::vector<absl::StatusOr<cdc::TableFacts>>
      tables;  // In PreflightOptions::tables order.
  absl::StatusOr<cdc::PublicationFacts> publication = absl::UnknownError("not read");
  absl::StatusOr<cdc::SlotFacts> slot = absl::UnknownError("not read");
  // Names quoted for SQL, for the fixes.
  std::string quoted_publication;
  std::vector<std::string> quoted_tables;
  std::string literal_slot;
  std::vector<StandbyFindings> others;  // The other hosts of a multi-host --pg.
  std::string quoted_key_column;
  std::optional<ShardFindings> shards;               // With --shard.
  std::optional<PublishingStandbyFindings> standby;  // When --pg is a standby.
};

// What --check read from Kafka.
struct KafkaFindings {
  absl::Status reachable;
  int brokers = 0;
  std::vector<std::string> topics;
};

std::vector<CheckLine> JudgePostgres(const PreflightOptions& options,
                                     const PgFindings& pg);
std::vector<CheckLine> JudgeKafka(const PreflightOptions& options, const PgFindings& pg,
                                  const KafkaFindings& kafka);

}  // namespace publisher

#endif  // PUBLISHER_OPERATIONS_PREFLIGHT_H_

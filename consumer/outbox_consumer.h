// OutboxConsumer: the consumer kit's loop. Reads records of the outbox topics from
// a consumer group (RecordSource), applies each event's effect once per id
// (ApplyOnce), and lets the group commit a record's offset only after that
// (RecordSource::Done):
//
//   Poll ──> held back? ──yes──> drop (read again after the held record)
//              │ no
//              v
//        ReadEnvelope ──invalid──────────────────────────> dead letter ──┐
//              v                                                          │
//          ApplyOnce ──applied / duplicate──────────────────────────────> Done
//              │ failed
//              v
//        DecideRetry ──retry──> hold the record, pause its partition;
//              │                 when due, ApplyOnce again, then resume
//              └──dead-letter──> dead letter ────────────────────────────> Done
//
// Once in a while, ids older than the retention that lie below the group's
// committed offset are pruned (ProcessedTable::Prune).
//
// Single-threaded: records of a partition are applied in offset order. A
// database that cannot be reached holds the record back without counting an
// attempt, for as long as it takes.
#ifndef CONSUMER_OUTBOX_CONSUMER_H_
#define CONSUMER_OUTBOX_CONSUMER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "consumer/database.h"
#include "consumer/failures/dead_letters.h"
#include "consumer/handler.h"
#include "consumer/failures/partition_gate.h"
#include "consumer/processed_table.h"
#include "consumer/record_source.h"
#include "consumer/failures/retry_policy.h"

namespace consumer {

class ConsumerMetrics;

struct ConsumerOptions {
  std::string group;  // For logs and dead-letter headers.
  RetryOptions retry;
  absl::Duration retention = absl::Hours(24 * 7);  // ProcessedTable::Prune.
  absl::Duration prune_interval = absl::Minutes(5);
  absl::Duration poll_timeout = absl::Milliseconds(100);
  absl::Duration stats_interval = absl::Seconds(10);
};

struct ConsumerStats {
  uint64_t applied = 0;        // Effects committed.
  uint64_t duplicates = 0;     // Records whose id was already processed: skipped.
  uint64_t retries = 0;        // Records held back for a retry.
  uint64_t dead_lettered = 0;  // Records sent to the dead-letter topic.
  uint64_t dropped = 0;        // Records behind a held one, to be read again.
  uint64_t pruned = 0;         // Processed ids deleted after the retention.
};

class OutboxConsumer {
 public:
  using Clock = std::function<absl::Time()>;

  // Borrows everything but the handler; each must outlive this.
  OutboxConsumer(
      RecordSource& source, Database& db, ProcessedTable& table,
      DeadLetterSink& dead_letters, Handler handler, ConsumerOptions options,
      common::Logger& log, Clock clock = [] { return absl::Now(); });

  // Steps until `stop`; an error only when the consumer cannot go on (the
  // source failed fatally).
  [[nodiscard]] absl::Status Run(const std::atomic<bool>& stop);

  // One turn: a due retry, or one polled record; then pruning and stats when due.
  [[nodiscard]] absl::Status Step();

  const ConsumerStats& stats() const { return stats_; }

  // Where each step's counters are published for /metrics; may be null. It must
  // outlive the consumer.
  void set_metrics(ConsumerMetrics* metrics) { metrics_ = metrics; }

 private:
  // Handles `r` (held before when `held` is true) to one of its outcomes.
  void Handle(const InboundRecord& r, bool held);
  // The record is done: its offset may be committed; a held one is released and
  // its partition resumes after it.
  void Finish(const InboundRecord& r, bool held);
  void Retry(const InboundRecord& r, bool held, const absl::Status& error, bool counted);
  void SendDeadLetter(const InboundRecord& r, bool held, const std::string& reason,
                      const absl::Status& error, int attempts);
  void MaybePrune(absl::Time now);
  void MaybeLogStats(absl::Time now);

  RecordSource& source_;
  Database& db_;
  ProcessedTable& table_;
  DeadLetterSink& dead_letters_;
  Handler handler_;
  ConsumerOptions options_;
  common::Logger& log_;
  Clock clock_;
  PartitionGate gate_;
  ConsumerStats stats_;
  absl::Time next_prune_;
  absl::Time next_stats_;
  ConsumerMetrics* metrics_ = nullptr;
};

}  // namespace consumer

#endif  // CONSUMER_OUTBOX_CONSUMER_H_

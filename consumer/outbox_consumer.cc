// OutboxConsumer: poll, apply once, retry or dead-letter, then let the offset go.
#include "consumer/outbox_consumer.h"

#include <algorithm>
#include <utility>

#include "consumer/apply_once.h"
#include "consumer/consumer_metrics.h"
#include "consumer/envelope_reader.h"

namespace consumer {

OutboxConsumer::OutboxConsumer(RecordSource& source, Database& db, ProcessedTable& table,
                               DeadLetterSink& dead_letters, Handler handler,
                               ConsumerOptions options, common::Logger& log, Clock clock)
    : source_(source),
      db_(db),
      table_(table),
      dead_letters_(dead_letters),
      handler_(std::move(handler)),
      options_(std::move(options)),
      log_(log),
      clock_(std::move(clock)),
      gate_(options_.retry.initial_backoff, options_.retry.max_backoff) {
  absl::Time now = clock_();
  next_prune_ = now + options_.prune_interval;
  next_stats_ = now + options_.stats_interval;
  // Whoever gets a revoked partition reads its held record again.
  source_.set_revoke_listener(
      [this](const std::vector<TopicPartition>& revoked) { gate_.Forget(revoked); });
}

absl::Status OutboxConsumer::Run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    if (absl::Status s = Step(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status OutboxConsumer::Step() {
  absl::Time now = clock_();
  if (const HeldRecord* due = gate_.Due(now)) {
    InboundRecord r = due->record;  // Handling may release it.
    Handle(r, /*held=*/true);
  } else {
    absl::Duration wait =
        std::clamp(gate_.next_due() - now, absl::ZeroDuration(), options_.poll_timeout);
    absl::StatusOr<std::optional<InboundRecord>> r = source_.Poll(wait);
    if (!r.ok()) return r.status();
    if (r->has_value()) {
      if (gate_.Holds((*r)->source)) {
        // Behind a held record: fetched before its partition paused.
        ++stats_.dropped;
      } else {
        Handle(**r, /*held=*/false);
      }
    }
  }
  now = clock_();
  MaybePrune(now);
  MaybeLogStats(now);
  if (metrics_ != nullptr) metrics_->Publish(stats_, gate_.size(), now);
  return absl::OkStatus();
}

void OutboxConsumer::Handle(const InboundRecord& r, bool held) {
  absl::StatusOr<outbox::v1::Envelope> envelope = ReadEnvelope(r);
  if (!envelope.ok()) {
    SendDeadLetter(r, held, "not an outbox envelope", envelope.status(), 0);
    return;
  }
  absl::StatusOr<ApplyResult> result =
      ApplyOnce(db_, table_, Event{*envelope, r, TraceContextOf(r)}, handler_);
  if (result.ok()) {
    ++(*result == ApplyResult::kApplied ? stats_.applied : stats_.duplicates);
    Finish(r, held);
    return;
  }
  if (db_.lost_connection()) {
    // The database failed, not the record: no attempt is counted.
    Retry(r, held, result.status(), /*counted=*/false);
    return;
  }
  int attempts = gate_.attempts(r.source, r.offset) + 1;
  RetryDecision d = DecideRetry(result.status(), attempts, options_.retry);
  if (d.retry) {
    Retry(r, held, result.status(), /*counted=*/true);
  } else {
    SendDeadLetter(r, held, d.dead_letter_reason, result.status(), attempts);
  }
}

void OutboxConsumer::Finish(const InboundRecord& r, bool held) {
  if (held) {
    gate_.Release(r.source);
    if (absl::Status s = source_.ResumeFrom(r.source, r.offset + 1); !s.ok()) {
      log_.Warn("cannot resume the partition (it is read again after a rebalance)",
                {{"topic", r.source.topic},
                 {"partition", static_cast<int64_t>(r.source.partition)},
                 {"error", std::string(s.message())}});
    }
  }
  // Fails only for a partition revoked meanwhile: its new owner reads the record
  // again, and finds its id.
  if (absl::Status s = source_.Done(r.source, r.offset); !s.ok()) {
    log_.Warn("cannot store the offset (the record is read again, and skipped)",
              {{"topic", r.source.topic},
               {"partition", static_cast<int64_t>(r.source.partition)},
               {"offset", r.offset},
               {"error", std::string(s.message())}});
  }
}

void OutboxConsumer::Retry(const InboundRecord& r, bool held, const absl::Status& error,
                           bool counted) {
  gate_.Hold(r, clock_(), counted);
  ++stats_.retries;
  if (!held) {
    if (absl::Status s = source_.Pause(r.source); !s.ok()) {
      log_.Warn("cannot pause the partition",
                {{"topic", r.source.topic},
                 {"partition", static_cast<int64_t>(r.source.partition)},
                 {"error", std::string(s.message())}});
    }
  }
  log_.Warn(counted
                ? "the handler failed; retrying the record after a backoff"
                : "the database or broker failed; retrying the record after a backoff",
            {{"topic", r.source.topic},
             {"partition", static_cast<int64_t>(r.source.partition)},
             {"offset", r.offset},
             {"attempts", static_cast<int64_t>(gate_.attempts(r.source, r.offset))},
             {"error", std::string(error.message())}});
}

void OutboxConsumer::SendDeadLetter(const InboundRecord& r, bool held,
                                    const std::string& reason, const absl::Status& error,
                                    int attempts) {
  absl::Status sent =
      dead_letters_.Send(DeadLetter{r, reason, error, attempts, options_.group});
  if (!sent.ok()) {
    // The record's offset must not pass before its dead letter is stored.
    Retry(r, held, sent, /*counted=*/false);
    return;
  }
  ++stats_.dead_lettered;
  TraceContext trace = TraceContextOf(r);
  log_.Warn("record sent to the dead-letter topic",
            {{"topic", r.source.topic},
             {"partition", static_cast<int64_t>(r.source.partition)},
             {"offset", r.offset},
             {"reason", reason},
             {"attempts", static_cast<int64_t>(attempts)},
             {"error", std::string(error.message())},
             {"traceparent", trace.traceparent},
             {"tracestate", trace.tracestate}});
  Finish(r, held);
}

void OutboxConsumer::MaybePrune(absl::Time now) {
  if (now < next_prune_) return;
  next_prune_ = now + options_.prune_interval;
  absl::StatusOr<std::vector<std::pair<TopicPartition, int64_t>>> committed =
      source_.Committed();
  if (!committed.ok()) {
    log_.Warn("cannot read the committed offsets; pruning later",
              {{"error", std::string(committed.status().message())}});
    return;
  }
  for (const auto& [tp, offset] : *committed) {
    if (offset <= 0) continue;
    absl::StatusOr<int64_t> n = table_.Prune(db_, tp, offset, options_.retention);
    if (!n.ok()) {
      log_.Warn("cannot prune processed ids; pruning later",
                {{"error", std::string(n.status().message())}});
      return;
    }
    stats_.pruned += *n;
  }
}

void OutboxConsumer::MaybeLogStats(absl::Time now) {
  if (now < next_stats_) return;
  next_stats_ = now + options_.stats_interval;
  log_.Info("consumer stats", {{"applied", stats_.applied},
                               {"duplicates", stats_.duplicates},
                               {"retries", stats_.retries},
                               {"dead_lettered", stats_.dead_lettered},
                               {"dropped", stats_.dropped},
                               {"pruned", stats_.pruned},
                               {"held", static_cast<uint64_t>(gate_.size())}});
}

}  // namespace consumer

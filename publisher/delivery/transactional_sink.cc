// TransactionalSink: whole PostgreSQL transactions per Kafka transaction,
// acknowledged when it commits.
#include "publisher/delivery/transactional_sink.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace publisher {

TransactionalSink::TransactionalSink(std::unique_ptr<TransactionLog> log,
                                     std::optional<Checkpoint> committed,
                                     TransactionalSinkOptions options,
                                     outbox::Logger& logger, Clock clock)
    : log_(std::move(log)),
      committed_(committed),
      options_(options),
      logger_(logger),
      clock_(std::move(clock)),
      policy_(options.interval) {}

absl::Status TransactionalSink::Produce(const OutboxRecord& record,
                                        const MessageToken& token, RecordKind kind) {
  if (!failure_.ok()) return failure_;
  if (!policy_.open()) {
    absl::Status s = log_->Begin();
    if (!s.ok()) {
      Fail(s, /*abort=*/true);
      return failure_;
    }
    policy_.Began(clock_());
  }
  absl::Status s = log_->Produce(record);
  if (!s.ok()) {
    // A full queue, or a record refused on its own, leaves the transaction whole.
    if (absl::IsResourceExhausted(s) || absl::IsInvalidArgument(s) ||
        absl::IsPermissionDenied(s) || absl::IsNotFound(s)) {
      return s;
    }
    Fail(s, /*abort=*/true);
    return failure_;
  }
  if (!current_.empty() && current_.back().token.transaction == token.transaction &&
      current_.back().kind == kind) {
    ++current_.back().messages;
    current_.back().token.bytes += token.bytes;
  } else {
    current_.push_back({token, 1, kind});
  }
  ++open_messages_;
  open_bytes_ += token.bytes;
  return absl::OkStatus();
}

void TransactionalSink::TransactionCommitted(const Checkpoint& checkpoint) {
  if (!failure_.ok()) return;
  pending_.insert(pending_.end(), current_.begin(), current_.end());
  current_.clear();
  boundary_ = checkpoint;
  if (policy_.open()) policy_.Boundary(clock_());
  MaybeCommit(false);
}

bool TransactionalSink::Full() const {
  return open_messages_ >= static_cast<size_t>(options_.max_messages) ||
         open_bytes_ >= static_cast<size_t>(options_.max_bytes);
}

void TransactionalSink::MaybeCommit(bool due) {
  // Never inside a PostgreSQL transaction: its rows would be split.
  if (!failure_.ok() || !policy_.open() || !current_.empty() || !boundary_) return;
  if (due || policy_.ShouldCommit(clock_(), Full())) Commit();
}

void TransactionalSink::Commit() {
  absl::Time began = clock_();
  absl::Status s = log_->Commit(*boundary_, options_.commit_timeout);
  if (!s.ok()) {
    Fail(s, /*abort=*/true);
    return;
  }
  Count(true);
  logger_.Debug("Kafka transaction committed",
                {{"records", static_cast<uint64_t>(open_messages_)},
                 {"checkpoint_lsn", boundary_->end_lsn.ToString()},
                 {"commit_ms", absl::ToInt64Milliseconds(clock_() - began)}});
  for (const Batch& b : pending_) {
    Delivery d;
    d.token = b.token;
    d.messages = b.messages;
    d.kind = b.kind;
    ready_.push_back(std::move(d));
    ready_messages_ += b.messages;
  }
  if (!committed_ || boundary_->end_lsn > committed_->end_lsn) committed_ = boundary_;
  Discard();
}

void TransactionalSink::Fail(const absl::Status& why, bool abort) {
  absl::Status cause = why;
  // A fenced producer can abort nothing, and one that could not deliver in time
  // would wait as long again to abort (TransactionLog); any other failure aborts
  // what is open. Either way the next producer's init aborts what is left open.
  if (abort && !absl::IsAborted(cause) && !absl::IsDeadlineExceeded(cause) &&
      policy_.open()) {
    absl::Status aborted = log_->Abort(options_.commit_timeout);
    if (absl::IsAborted(aborted)) cause = aborted;
  }
  if (policy_.open()) Count(false);
  size_t dropped = open_messages_;
  Discard();
  if (absl::IsAborted(cause)) {
    failure_ = absl::FailedPreconditionError(cause.message());
    return;
  }
  failure_ = absl::AbortedError(absl::StrCat(
      "the Kafka transaction failed (", dropped, " record(s) in it, ",
      absl::IsDeadlineExceeded(cause) ? "left for the next producer to abort" : "aborted",
      "): ", cause.message(),
      "; recreating the producer and rewinding to the last committed checkpoint"));
}

void TransactionalSink::Count(bool committed) {
  ++(committed ? stats_.committed : stats_.aborted);
  if (counter_ != nullptr) counter_->CountKafkaTransaction(committed);
}

void TransactionalSink::Discard() {
  current_.clear();
  pending_.clear();
  open_messages_ = 0;
  open_bytes_ = 0;
  boundary_.reset();
  policy_.Ended();
}

void TransactionalSink::Poll(absl::Duration timeout,
                             const std::function<void(Delivery)>& on_delivery) {
  MaybeCommit(false);
  log_->Poll(ready_.empty() ? timeout : absl::ZeroDuration());
  std::vector<Delivery> ready;
  ready.swap(ready_);
  ready_messages_ = 0;
  for (Delivery& d : ready) on_delivery(std::move(d));
}

size_t TransactionalSink::outstanding() const { return open_messages_ + ready_messages_; }

absl::Time TransactionalSink::next_deadline() const {
  if (!failure_.ok() || !current_.empty() || !boundary_) return absl::InfiniteFuture();
  return policy_.deadline();
}

void TransactionalSink::EndRun() {
  if (!failure_.ok() || !policy_.open()) return;
  if (current_.empty() && boundary_) {
    Commit();
    return;
  }
  // Stopped inside a PostgreSQL transaction: committing would split it.
  logger_.Info(
      "the run ended inside a PostgreSQL transaction; aborting the open Kafka "
      "transaction (its rows are read again from the slot, after the checkpoint)",
      {{"records", static_cast<uint64_t>(open_messages_)}});
  absl::Status s = log_->Abort(options_.commit_timeout);
  if (!s.ok()) {
    Fail(s, /*abort=*/false);  // The producer's state is unknown: recreate it.
    return;
  }
  Count(false);
  Discard();
}

}  // namespace publisher

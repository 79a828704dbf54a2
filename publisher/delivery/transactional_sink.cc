// TransactionalSink: whole PostgreSQL transactions per Kafka transaction,
// acknowledged when it commits; what is offered while one commits is held.
#include "publisher/delivery/transactional_sink.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace publisher {

TransactionalSink::TransactionalSink(std::unique_ptr<TransactionLog> log,
                                     std::optional<Checkpoint> committed,
                                     TransactionalSinkOptions options,
                                     common::Logger& logger, Clock clock)
    : log_(std::move(log)),
      committed_(committed),
      options_(options),
      logger_(logger),
      clock_(std::move(clock)),
      policy_(options.interval) {}

absl::Status TransactionalSink::Produce(const OutboxRecord& record,
                                        const MessageToken& token, RecordKind kind) {
  if (!failure_.ok()) return failure_;
  if (awaiting_letter_ && kind == RecordKind::kDeadLetter &&
      token.transaction == awaiting_letter_->transaction) {
    // In the refused record's place: the rest of its transaction is still held.
    absl::Status s = ProduceNow(record, token, kind);
    if (!absl::IsResourceExhausted(s)) awaiting_letter_.reset();
    return s;
  }
  if (!Holding()) return ProduceNow(record, token, kind);
  // While a refused record awaits its letter the relay offers that letter as soon
  // as this returns (it is queued to be dead-lettered): refusing room here would
  // stop it for good.
  if (HeldFull() && !awaiting_letter_) {
    return absl::ResourceExhaustedError(
        "a Kafka transaction is committing and the records read meanwhile reached "
        "the in-flight limits");
  }
  held_.Hold(record, token, kind);
  return absl::OkStatus();
}

absl::Status TransactionalSink::ProduceNow(const OutboxRecord& record,
                                           const MessageToken& token, RecordKind kind) {
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
  if (Holding()) {
    held_.HoldBoundary(checkpoint, clock_());
    return;
  }
  Boundary(checkpoint, clock_());
  MaybeCommit(false);
}

void TransactionalSink::Boundary(const Checkpoint& checkpoint, absl::Time seen) {
  pending_.insert(pending_.end(), current_.begin(), current_.end());
  current_.clear();
  boundary_ = checkpoint;
  if (policy_.open()) policy_.Boundary(seen);
}

bool TransactionalSink::Full() const {
  return open_messages_ >= static_cast<size_t>(options_.max_messages) ||
         open_bytes_ >= static_cast<size_t>(options_.max_bytes);
}

bool TransactionalSink::HeldFull() const {
  return held_.messages() >= static_cast<size_t>(options_.max_messages) ||
         held_.bytes() >= static_cast<size_t>(options_.max_bytes);
}

void TransactionalSink::MaybeCommit(bool due) {
  // Never inside a PostgreSQL transaction: its rows would be split. Nor while a
  // refused record awaits its letter: the letter belongs before what follows.
  if (!failure_.ok() || committing_ || awaiting_letter_ || !policy_.open() ||
      !current_.empty() || !boundary_) {
    return;
  }
  if (due || policy_.ShouldCommit(clock_(), Full())) StartCommit();
}

void TransactionalSink::StartCommit() {
  log_->StartCommit(*boundary_, options_.commit_timeout);
  committing_ = true;
  commit_began_ = clock_();
  committing_batches_ = std::move(pending_);
  committing_boundary_ = boundary_;
  committing_messages_ = open_messages_;
  Discard();
}

void TransactionalSink::CommitEnded(const absl::Status& outcome) {
  if (!outcome.ok()) {
    Fail(outcome, /*abort=*/true);
    return;
  }
  committing_ = false;
  Count(true);
  logger_.Debug("Kafka transaction committed",
                {{"records", static_cast<uint64_t>(committing_messages_)},
                 {"checkpoint_lsn", committing_boundary_->end_lsn.ToString()},
                 {"commit_ms", absl::ToInt64Milliseconds(clock_() - commit_began_)},
                 {"held", static_cast<uint64_t>(held_.messages())}});
  for (const Batch& b : committing_batches_) {
    Delivery d;
    d.token = b.token;
    d.messages = b.messages;
    d.kind = b.kind;
    ready_.push_back(std::move(d));
    ready_messages_ += b.messages;
  }
  if (!committed_ || committing_boundary_->end_lsn > committed_->end_lsn)
    committed_ = committing_boundary_;
  committing_batches_.clear();
  committing_boundary_.reset();
  committing_messages_ = 0;
}

void TransactionalSink::Replay() {
  while (failure_.ok() && !committing_ && !awaiting_letter_ && !held_.empty()) {
    if (auto* b = std::get_if<HeldRecords::Boundary>(&held_.front())) {
      HeldRecords::Boundary boundary = std::move(*b);
      held_.Pop();
      Boundary(boundary.checkpoint, boundary.seen);
      // A held end is not the stream's latest, so it says nothing of a quiet
      // stream: only the limits commit here.
      if (Full()) MaybeCommit(true);
      continue;
    }
    auto& held = std::get<HeldRecords::Record>(held_.front());
    absl::Status s = ProduceNow(held.record, held.token, held.kind);
    if (absl::IsResourceExhausted(s)) return;  // Again at the next poll.
    if (!failure_.ok()) return;                // Fail dropped everything.
    if (!s.ok()) {
      // Refused for good: reported as a delivery, so that the relay offers its
      // dead letter (an event's) or halts (a dead letter's).
      if (held.kind == RecordKind::kEvent) awaiting_letter_ = held.token;
      Delivery d;
      d.token = held.token;
      d.status = s;
      d.kind = held.kind;
      d.record = std::move(held.record);
      ready_.push_back(std::move(d));
      ++ready_messages_;
    }
    held_.Pop();
  }
}

void TransactionalSink::Fail(const absl::Status& why, bool abort) {
  absl::Status cause = why;
  bool open = policy_.open() || committing_;
  // A fenced producer can abort nothing, and one that could not deliver in time
  // would wait as long again to abort (TransactionLog); any other failure aborts
  // what is open. Either way the next producer's init aborts what is left open.
  if (abort && !absl::IsAborted(cause) && !absl::IsDeadlineExceeded(cause) && open) {
    absl::Status aborted = log_->Abort(options_.commit_timeout);
    if (absl::IsAborted(aborted)) cause = aborted;
  }
  if (open) Count(false);
  size_t dropped = open_messages_ + committing_messages_;
  size_t held = held_.messages();
  Discard();
  committing_ = false;
  committing_batches_.clear();
  committing_boundary_.reset();
  committing_messages_ = 0;
  held_.Clear();
  awaiting_letter_.reset();
  if (absl::IsAborted(cause)) {
    failure_ = absl::FailedPreconditionError(cause.message());
    return;
  }
  failure_ = absl::AbortedError(absl::StrCat(
      "the Kafka transaction failed (", dropped, " record(s) in it, ",
      absl::IsDeadlineExceeded(cause) ? "left for the next producer to abort" : "aborted",
      held > 0 ? absl::StrCat("; ", held, " read meanwhile, never produced") : "",
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

void TransactionalSink::DropHeld(absl::string_view why) {
  if (held_.empty() && !awaiting_letter_) return;
  logger_.Info(why, {{"records", static_cast<uint64_t>(held_.messages())}});
  held_.Clear();
  awaiting_letter_.reset();
}

void TransactionalSink::Advance(absl::Duration wait) {
  if (committing_) {
    std::optional<absl::Status> outcome = log_->CommitOutcome(wait);
    if (!outcome) return;
    CommitEnded(*outcome);
  }
  Replay();
  if (held_.empty()) MaybeCommit(false);
}

void TransactionalSink::Poll(absl::Duration timeout,
                             const std::function<void(Delivery)>& on_delivery) {
  Advance(absl::ZeroDuration());
  if (committing_) {
    // The commit (perhaps started just now) owns the producer until it ends: wait
    // for that instead.
    Advance(ready_.empty() ? timeout : absl::ZeroDuration());
  } else {
    log_->Poll(ready_.empty() ? timeout : absl::ZeroDuration());
  }
  std::vector<Delivery> ready;
  ready.swap(ready_);
  ready_messages_ = 0;
  for (Delivery& d : ready) on_delivery(std::move(d));
}

size_t TransactionalSink::outstanding() const {
  return open_messages_ + committing_messages_ + held_.messages() + ready_messages_;
}

absl::Time TransactionalSink::next_deadline() const {
  if (!failure_.ok()) return absl::InfiniteFuture();
  // A commit that goes on, or held records waiting for room in the local queue.
  if (committing_ || (!held_.empty() && !awaiting_letter_))
    return clock_() + kCommitPollGap;
  if (!current_.empty() || !boundary_) return absl::InfiniteFuture();
  return policy_.deadline();
}

void TransactionalSink::EndRun() {
  if (!failure_.ok()) return;
  if (committing_) {
    CommitEnded(AwaitCommit(*log_));
    if (!failure_.ok()) return;
  }
  DropHeld(
      "the run ended with records read while a Kafka transaction committed; they "
      "were never produced, and are read again from the slot");
  if (!policy_.open()) return;
  if (current_.empty() && boundary_) {
    StartCommit();
    CommitEnded(AwaitCommit(*log_));
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

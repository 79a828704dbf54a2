// AckTracker: a deque of transactions in commit order, drained from the front.
#include "publisher/relay/ack_tracker.h"

#include <algorithm>

#include "absl/status/statusor.h"

namespace publisher {

absl::Status AckTracker::Begin(absl::Time committed) {
  if (open_) return absl::FailedPreconditionError("Begin inside an open transaction");
  transactions_.push_back(
      Transaction{next_sequence_++, cdc::Lsn(), false, 0, std::nullopt, committed});
  open_ = true;
  return absl::OkStatus();
}

absl::StatusOr<MessageToken> AckTracker::Enqueue(size_t bytes, absl::Time now) {
  if (!open_) return absl::FailedPreconditionError("message outside a transaction");
  Transaction& t = transactions_.back();
  ++t.pending;
  if (!t.first_enqueue) t.first_enqueue = now;
  ++in_flight_messages_;
  in_flight_bytes_ += bytes;
  return MessageToken{t.sequence, bytes};
}

absl::Status AckTracker::Commit(cdc::Lsn end_lsn) {
  if (!open_) return absl::FailedPreconditionError("Commit without a transaction");
  Transaction& t = transactions_.back();
  t.committed = true;
  t.end_lsn = end_lsn;
  open_ = false;
  Advance();
  return absl::OkStatus();
}

AckTracker::Transaction* AckTracker::Find(uint64_t sequence) {
  if (transactions_.empty() || sequence < transactions_.front().sequence) return nullptr;
  uint64_t index = sequence - transactions_.front().sequence;
  if (index >= transactions_.size()) return nullptr;
  return &transactions_[index];
}

void AckTracker::Acknowledge(const MessageToken& token, size_t messages) {
  Transaction* t = Find(token.transaction);
  if (t == nullptr || t->pending == 0) return;  // From before a Reset.
  messages = std::min(messages, t->pending);
  t->pending -= messages;
  in_flight_messages_ -= messages;
  in_flight_bytes_ -= std::min(in_flight_bytes_, token.bytes);
  Advance();
}

void AckTracker::ObserveServerWalEnd(cdc::Lsn wal_end) {
  // Only when nothing received is open or unacknowledged: the WAL end may lie
  // inside a transaction whose rows we hold.
  if (transactions_.empty()) confirmable_ = std::max(confirmable_, wal_end);
}

void AckTracker::Reset() {
  transactions_.clear();
  open_ = false;
  in_flight_messages_ = 0;
  in_flight_bytes_ = 0;
}

std::optional<absl::Time> AckTracker::oldest_unacknowledged() const {
  for (const Transaction& t : transactions_) {
    if (t.pending > 0) return t.first_enqueue;
  }
  return std::nullopt;
}

std::optional<absl::Time> AckTracker::oldest_pending_commit() const {
  for (const Transaction& t : transactions_) {
    if (t.pending > 0) return t.commit_time;
  }
  return std::nullopt;
}

void AckTracker::Advance() {
  while (!transactions_.empty()) {
    const Transaction& t = transactions_.front();
    if (!t.committed || t.pending > 0) break;
    confirmable_ = std::max(confirmable_, t.end_lsn);
    transactions_.pop_front();
  }
}

}  // namespace publisher

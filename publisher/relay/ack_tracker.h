// AckTracker: which WAL position is safe to confirm to PostgreSQL.
//
// The heart of the at-least-once guarantee. It learns, in stream order, of
// transaction begins, the messages produced for each, and commits; and, in any
// order, of the broker's delivery reports. It answers one question: the highest LSN
// at which every published row at or below it has been acknowledged.
//
// Invariants (docs/design.md, "The confirmation rule"):
//  1. confirmable = end LSN of the last transaction in the contiguous prefix of
//     transactions that are committed and fully acknowledged;
//  2. a transaction without messages is confirmable once every earlier one is;
//  3. a keepalive's WAL end is confirmable only when no received transaction is
//     open or unacknowledged;
//  4. confirmable never decreases;
//  5. a message that failed is simply never acknowledged, so its transaction, and
//     every later one, stays unconfirmed until the caller resolves it: a
//     dead-letter delivery acknowledges the same token, a rewind calls Reset().
//
// Pure: no I/O, no clock (callers pass times), no locks (one relay thread).
#ifndef PUBLISHER_RELAY_ACK_TRACKER_H_
#define PUBLISHER_RELAY_ACK_TRACKER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cdc/lsn.h"
#include "publisher/delivery/message_token.h"

namespace publisher {

class AckTracker {
 public:
  // A transaction begins; `committed` is its commit time (pgoutput's Begin
  // carries it), for oldest_pending_commit. kFailedPrecondition if one is
  // already open.
  [[nodiscard]] absl::Status Begin(absl::Time committed = absl::InfinitePast());
  // Registers a message of the open transaction.
  [[nodiscard]] absl::StatusOr<MessageToken> Enqueue(size_t bytes, absl::Time now);
  // The open transaction committed; `end_lsn` is its Commit message's end_lsn.
  [[nodiscard]] absl::Status Commit(cdc::Lsn end_lsn);

  // The broker acknowledged the message; or, with `messages` > 1, that many
  // messages of the token's transaction together, token.bytes being their total
  // (a Kafka transaction's commit). Tokens from before a Reset are ignored.
  void Acknowledge(const MessageToken& token, size_t messages = 1);

  // A keepalive reported the server's WAL end.
  void ObserveServerWalEnd(cdc::Lsn wal_end);

  // Forgets every open and unacknowledged transaction: the caller rewinds to the
  // slot, so all of them will be received again. The confirmable LSN stays.
  void Reset();

  cdc::Lsn confirmable() const { return confirmable_; }
  bool idle() const { return transactions_.empty(); }
  bool in_transaction() const { return open_; }
  size_t in_flight_messages() const { return in_flight_messages_; }
  size_t in_flight_bytes() const { return in_flight_bytes_; }
  // Enqueue time of the oldest transaction still waiting for acknowledgements.
  std::optional<absl::Time> oldest_unacknowledged() const;
  // Commit time of the oldest transaction with messages still waiting for
  // acknowledgements; nullopt when none waits (transactions without messages
  // never count): what outbox_publisher_lag_seconds measures from.
  std::optional<absl::Time> oldest_pending_commit() const;

 private:
  struct Transaction {
    uint64_t sequence;
    cdc::Lsn end_lsn;  // Valid once committed.
    bool committed = false;
    size_t pending = 0;  // Messages not yet acknowledged.
    std::optional<absl::Time> first_enqueue;
    absl::Time commit_time = absl::InfinitePast();  // From its Begin.
  };

  Transaction* Find(uint64_t sequence);
  void Advance();

  std::deque<Transaction> transactions_;  // In commit order; front = oldest.
  uint64_t next_sequence_ = 0;
  bool open_ = false;
  cdc::Lsn confirmable_;
  size_t in_flight_messages_ = 0;
  size_t in_flight_bytes_ = 0;
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_ACK_TRACKER_H_

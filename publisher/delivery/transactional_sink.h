// TransactionalSink: the Sink of --delivery=exactly-once. Pure: it
// drives a TransactionLog (the librdkafka one is KafkaTransactions) and a clock.
//
// Records of whole PostgreSQL transactions gather in one Kafka transaction. It
// commits, with the checkpoint of the last whole PostgreSQL transaction in it,
// only between PostgreSQL transactions: at a boundary once --transaction-interval
// has passed since the Kafka transaction began, or no PostgreSQL transaction has
// ended for a fifth of it, or the in-flight limits are reached, or the run ends
// (TransactionBatchPolicy). Only when the commit has succeeded are the records
// acknowledged (Delivery per PostgreSQL transaction, `messages` at once): the
// slot is never confirmed past what a read_committed consumer can see.
//
// A commit does not stop the reader. While it goes on, the records offered and
// the PostgreSQL commits between them are held (HeldRecords), up to the in-flight
// limits; once it has succeeded, they are produced into the next Kafka
// transaction, in the order they came.
//
//   relay Produce ------> current    (the PostgreSQL transaction being read)
//   TransactionCommitted: current -> pending (whole transactions, checkpoint)
//   commit starts:        pending -> committing; Produce and
//                         TransactionCommitted -> held
//   commit OK:            committing -> ready (reported by Poll);
//                         held -> produced into the next Kafka transaction
//   any failure:          abort; drop everything, held included (never
//                         produced); failure() = kAborted (recreate, rewind to the
//                         checkpoint) or, when fenced, kFailedPrecondition (stop)
//
// A held record the producer refuses for good (too large, unknown topic) is
// reported like any refused delivery, and its PostgreSQL transaction goes no
// further until the relay offers its dead letter, which takes its place.
//
// A run that ends inside a PostgreSQL transaction aborts the Kafka transaction:
// nothing of it is reported, nothing of it is confirmed, and all of it is read
// again from the slot, after the same checkpoint. What is held when a run ends is
// dropped, and read again too.
#ifndef PUBLISHER_DELIVERY_TRANSACTIONAL_SINK_H_
#define PUBLISHER_DELIVERY_TRANSACTIONAL_SINK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "publisher/delivery/checkpoint.h"
#include "publisher/delivery/held_records.h"
#include "publisher/delivery/sink.h"
#include "publisher/delivery/transaction_log.h"

namespace publisher {

// How much longer a commit waits than one Kafka request (RequestTimeout): the
// request's retry on a new connection, after librdkafka's reconnect backoff (at
// most 10 s by default). It stays below transaction.timeout.ms (60 s), after
// which the broker aborts the transaction itself.
inline constexpr absl::Duration kCommitTimeoutMargin = absl::Seconds(20);

// How often the relay looks in on a commit that goes on (next_deadline): the
// acknowledgements wait at most this long once it has ended.
inline constexpr absl::Duration kCommitPollGap = absl::Milliseconds(1);

struct TransactionalSinkOptions {
  absl::Duration interval = absl::Milliseconds(100);  // --transaction-interval
  int64_t max_messages = 20000;                       // --max-in-flight
  int64_t max_bytes = 16777216;                       // --max-in-flight-bytes
  absl::Duration commit_timeout = absl::Seconds(30);
};

// Figures for the stats line and /metrics.
// Where a Kafka transaction's outcome is also counted (the program's Metrics).
class KafkaTransactionCounter {
 public:
  virtual ~KafkaTransactionCounter() = default;
  virtual void CountKafkaTransaction(bool committed) = 0;
};

struct TransactionStats {
  uint64_t committed = 0;  // Kafka transactions.
  uint64_t aborted = 0;
};

class TransactionalSink : public Sink {
 public:
  using Clock = std::function<absl::Time()>;

  // `committed` is the latest checkpoint read back from Kafka after `log` was
  // initialized. `logger` must outlive the sink.
  TransactionalSink(
      std::unique_ptr<TransactionLog> log, std::optional<Checkpoint> committed,
      TransactionalSinkOptions options, common::Logger& logger,
      Clock clock = [] { return absl::Now(); });

  absl::Status Produce(const OutboxRecord& record, const MessageToken& token,
                       RecordKind kind) override;
  void Poll(absl::Duration timeout,
            const std::function<void(Delivery)>& on_delivery) override;
  size_t outstanding() const override;
  std::optional<Checkpoint> committed_checkpoint() const override { return committed_; }
  void TransactionCommitted(const Checkpoint& checkpoint) override;
  bool acknowledges_whole_transactions() const override { return true; }
  absl::Time next_deadline() const override;
  void EndRun() override;
  absl::Status failure() const override { return failure_; }

  const TransactionStats& stats() const { return stats_; }
  // Where commits and aborts are also counted; not owned, may be null.
  void set_transaction_counter(KafkaTransactionCounter* counter) { counter_ = counter; }

 private:
  // Messages of one PostgreSQL transaction (and whether they are dead letters),
  // acknowledged together: token.bytes is their total.
  struct Batch {
    MessageToken token;
    size_t messages = 0;
    RecordKind kind = RecordKind::kEvent;
  };

  // Produces `record` into the open Kafka transaction, beginning one if none is.
  absl::Status ProduceNow(const OutboxRecord& record, const MessageToken& token,
                          RecordKind kind);
  // A PostgreSQL transaction ended (at `seen`) with what the open Kafka
  // transaction holds of it: it becomes whole there. (The caller decides whether
  // to commit.)
  void Boundary(const Checkpoint& checkpoint, absl::Time seen);
  // Whether Produce and TransactionCommitted must hold what they are given.
  bool Holding() const { return committing_ || !held_.empty() || awaiting_letter_; }
  bool Full() const;
  bool HeldFull() const;
  // Moves what is due: collects the outcome of a commit that has ended (waiting
  // up to `wait`), produces what was held, and starts a commit that is due.
  void Advance(absl::Duration wait);
  // Commits the open Kafka transaction if it is between PostgreSQL transactions
  // and `due`.
  void MaybeCommit(bool due);
  void StartCommit();
  // The commit ended with `outcome`: acknowledge what it carried, or fail.
  void CommitEnded(const absl::Status& outcome);
  // Produces held records into the open Kafka transaction until none is left, the
  // local queue is full, a commit starts or a refused record awaits its letter.
  void Replay();
  // Counts a Kafka transaction's outcome in stats_ and counter_.
  void Count(bool committed);
  // The Kafka transaction (or the producer) failed with `why`: abort it (when
  // `abort`), drop what it held and what was held, and set failure_.
  void Fail(const absl::Status& why, bool abort);
  // Forgets the open Kafka transaction (not the committing one, nor what is held).
  void Discard();
  // Forgets what is held, logging why.
  void DropHeld(absl::string_view why);

  std::unique_ptr<TransactionLog> log_;
  std::optional<Checkpoint> committed_;
  TransactionalSinkOptions options_;
  common::Logger& logger_;
  Clock clock_;
  TransactionBatchPolicy policy_;
  std::optional<Checkpoint> boundary_;  // The last whole PostgreSQL transaction.
  std::vector<Batch> current_;          // The PostgreSQL transaction being read.
  std::vector<Batch> pending_;          // Whole ones, in the open Kafka transaction.
  std::vector<Delivery> ready_;         // Committed (or refused), not yet reported.
  size_t open_messages_ = 0;            // current_ and pending_.
  size_t open_bytes_ = 0;
  size_t ready_messages_ = 0;
  // The Kafka transaction being committed: whole PostgreSQL transactions.
  bool committing_ = false;
  std::vector<Batch> committing_batches_;
  std::optional<Checkpoint> committing_boundary_;
  size_t committing_messages_ = 0;
  absl::Time commit_began_;
  HeldRecords held_;  // Offered since the commit began.
  // A held record the producer refused for good: its dead letter goes next.
  std::optional<MessageToken> awaiting_letter_;
  absl::Status failure_;
  TransactionStats stats_;
  KafkaTransactionCounter* counter_ = nullptr;
};

}  // namespace publisher

#endif  // PUBLISHER_DELIVERY_TRANSACTIONAL_SINK_H_

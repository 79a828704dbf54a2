// TransactionLog: what the exactly-once sink (transactional_sink.h) needs of a
// transactional producer. KafkaTransactions (kafka_transactions.h) is the
// librdkafka one; tests script a fake.
//
//   (Begin -> Produce ... -> StartCommit(checkpoint) -> CommitOutcome ... | Abort)*
//
// A commit goes on by itself once started: the caller keeps reading meanwhile, and
// calls nothing else (no Produce, Begin, Abort or Poll) until CommitOutcome has
// returned its outcome.
//
// Status codes:
//   kAborted             fenced: a newer instance of the transactional id took
//                        over; this one must stop
//   kResourceExhausted   (Produce) the local queue is full: Poll, then try again
//   kInvalidArgument,    (Produce) this record is refused; the transaction is
//   kPermissionDenied,   unharmed
//   kNotFound
//   kDeadlineExceeded    (commit) its records were not delivered in time, or a
//                        request to a broker timed out: recreate the producer
//                        without aborting (an abort would wait on the same silent
//                        paths; the new producer's init aborts the transaction),
//                        rewind to the checkpoint
//   anything else        the transaction failed: abort it, recreate the producer,
//                        rewind to the checkpoint
#ifndef PUBLISHER_DELIVERY_TRANSACTION_LOG_H_
#define PUBLISHER_DELIVERY_TRANSACTION_LOG_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "publisher/delivery/checkpoint.h"
#include "publisher/delivery/outbox_record.h"

namespace publisher {

class TransactionLog {
 public:
  virtual ~TransactionLog() = default;
  [[nodiscard]] virtual absl::Status Begin() = 0;
  // Queues one record of the open transaction.
  [[nodiscard]] virtual absl::Status Produce(const OutboxRecord& record) = 0;
  // Starts writing `checkpoint` into the open transaction and committing it: its
  // records and the checkpoint become visible together, or neither. The commit
  // ends, one way or the other, within `timeout`.
  virtual void StartCommit(const Checkpoint& checkpoint, absl::Duration timeout) = 0;
  // The started commit's outcome once it has ended, waiting up to `wait` for that;
  // nullopt while it goes on. Only after OK may the slot be confirmed up to the
  // checkpoint.
  [[nodiscard]] virtual std::optional<absl::Status> CommitOutcome(
      absl::Duration wait) = 0;
  [[nodiscard]] virtual absl::Status Abort(absl::Duration timeout) = 0;
  // Lets the producer's queue drain, waiting up to `timeout`.
  virtual void Poll(absl::Duration timeout) = 0;
};

// Waits for the started commit's outcome.
[[nodiscard]] inline absl::Status AwaitCommit(TransactionLog& log) {
  std::optional<absl::Status> outcome;
  while (!(outcome = log.CommitOutcome(absl::InfiniteDuration()))) {
  }
  return *outcome;
}

// Commits the open transaction and waits for the outcome.
[[nodiscard]] inline absl::Status CommitAndWait(TransactionLog& log,
                                                const Checkpoint& checkpoint,
                                                absl::Duration timeout) {
  log.StartCommit(checkpoint, timeout);
  return AwaitCommit(log);
}

}  // namespace publisher

#endif  // PUBLISHER_DELIVERY_TRANSACTION_LOG_H_

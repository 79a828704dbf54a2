// KafkaTransactions: the librdkafka shell of --delivery=exactly-once (issue 10): a
// transactional producer whose every Kafka transaction ends with the checkpoint
// record (publisher/checkpoint.h) of the last PostgreSQL transaction it carries.
//
//   Init -> (Begin -> Produce ... -> Commit(checkpoint) | Abort)*
//
// Status codes, for the caller's choice:
//   kAborted             fatal: fenced by a newer instance of the transactional id,
//                        or the producer's state is lost; stop (exit 1)
//   kUnavailable         the transaction failed and was (or must be) aborted:
//                        rewind to the checkpoint and produce it again
//   kDeadlineExceeded    the broker did not answer in time: Abort, then rewind
//   anything else        a record the broker refuses (permanent)
#ifndef PUBLISHER_KAFKA_TRANSACTIONS_H_
#define PUBLISHER_KAFKA_TRANSACTIONS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "publisher/checkpoint.h"
#include "publisher/config.h"
#include "publisher/log.h"
#include "publisher/mapper.h"

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_error_s rd_kafka_error_t;

namespace publisher {

class KafkaTransactions {
 public:
  // A producer with the publisher's settings (kafka_sink.h) plus `transactional_id`
  // (implying idempotence and acks=all). `log` must outlive it.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<KafkaTransactions>> Create(
      const Config& config, Logger& log, std::string transactional_id,
      std::string checkpoint_topic);
  ~KafkaTransactions();

  // init_transactions: on a real broker this fences every older instance of the
  // transactional id and aborts what it left open.
  [[nodiscard]] absl::Status Init(absl::Duration timeout);
  [[nodiscard]] absl::Status Begin();
  // Queues one record of the open transaction.
  [[nodiscard]] absl::Status Produce(const OutboxRecord& record);
  // Produces the checkpoint record, then commits: every record of the transaction
  // and the checkpoint become visible together. Only after OK may the slot be
  // confirmed up to checkpoint.end_lsn.
  [[nodiscard]] absl::Status Commit(const Checkpoint& checkpoint, absl::Duration timeout);
  [[nodiscard]] absl::Status Abort(absl::Duration timeout);

  const std::string& transactional_id() const { return transactional_id_; }

 private:
  KafkaTransactions(Logger& log, std::string id, std::string topic)
      : log_(log), transactional_id_(std::move(id)), checkpoint_topic_(std::move(topic)) {}
  // Maps (and frees) a transactional API error to the codes above.
  absl::Status FromError(rd_kafka_error_t* error, absl::string_view what);

  Logger& log_;
  std::string transactional_id_;
  std::string checkpoint_topic_;
  rd_kafka_t* rk_ = nullptr;
};

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_TRANSACTIONS_H_

// KafkaTransactions: the librdkafka shell of --delivery=exactly-once: a
// transactional producer whose every Kafka transaction ends with the checkpoint
// record (publisher/delivery/checkpoint.h) of the last PostgreSQL transaction it carries.
//
//   Init -> (Begin -> Produce ... -> StartCommit(checkpoint) -> CommitOutcome | Abort)*
//
// It is the TransactionLog (transaction_log.h) of the exactly-once sink; status
// codes as that interface says. A commit runs on a thread of its own, which has
// the producer to itself until it ends: the caller keeps reading meanwhile.
#ifndef PUBLISHER_KAFKA_KAFKA_TRANSACTIONS_H_
#define PUBLISHER_KAFKA_KAFKA_TRANSACTIONS_H_

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kafka/handles.h"
#include "common/log.h"
#include "publisher/delivery/checkpoint.h"
#include "publisher/delivery/transaction_log.h"
#include "publisher/delivery/transaction_proof.h"
#include "publisher/kafka/kafka_options.h"
#include "publisher/kafka/topic_handles.h"
#include "publisher/mapping/mapper.h"
#include "publisher/operations/metrics.h"

namespace publisher {

// The transactional producer's librdkafka properties: the publisher's
// (DefaultProducerProperties), then those of transactions; -X comes after them.
std::vector<std::pair<std::string, std::string>> TransactionalProducerProperties(
    const KafkaOptions& options, const std::string& transactional_id);

class KafkaTransactions : public TransactionLog {
 public:
  // A producer with the publisher's settings (kafka_sink.h) plus `transactional_id`
  // (implying idempotence and acks=all). `log` must outlive it.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<KafkaTransactions>> Create(
      const KafkaOptions& options, common::Logger& log, std::string transactional_id,
      std::string checkpoint_topic);
  ~KafkaTransactions();

  // init_transactions: on a real broker this fences every older instance of the
  // transactional id and aborts what it left open.
  [[nodiscard]] absl::Status Init(absl::Duration timeout);
  absl::Status Begin() override;
  absl::Status Produce(const OutboxRecord& record) override;
  // On the commit's thread: waits until every record is proven stored (a report
  // with an offset), then produces the checkpoint record, proves it too, and
  // commits. A record without proof fails the commit (kUnavailable): the caller
  // aborts. Only after OK may the slot be confirmed up to checkpoint.end_lsn.
  void StartCommit(const Checkpoint& checkpoint, absl::Duration timeout) override;
  std::optional<absl::Status> CommitOutcome(absl::Duration wait) override;
  absl::Status Abort(absl::Duration timeout) override;
  void Poll(absl::Duration timeout) override;

  const std::string& transactional_id() const { return transactional_id_; }
  // Where librdkafka's errors go besides the log (/healthz); may be null. Set it
  // before Init; it must outlive this.
  void set_metrics(Metrics* metrics) { metrics_ = metrics; }

 private:
  KafkaTransactions(common::Logger& log, std::string id, std::string topic);
  // Maps (and frees) a transactional API error to TransactionLog's codes.
  absl::Status FromError(rd_kafka_error_t* error, absl::string_view what);
  // A fatal producer error: kAborted when it was fencing, else kInternal.
  absl::Status Fatal(int rd_kafka_resp_err, absl::string_view message);
  // Queues `record` in the open transaction, expecting its delivery report.
  absl::Status Queue(const OutboxRecord& record);
  // The commit, on its own thread.
  absl::Status Commit(const Checkpoint& checkpoint, absl::Duration timeout);
  // commit_transaction, resumed until it ends, the deadline passes or the commit
  // is cancelled.
  absl::Status EndTransaction(absl::Time deadline);
  // How often the commit looks up from waiting: for a silent path, or to be
  // cancelled (the producer is being destroyed).
  static constexpr absl::Duration kFlushSlice = absl::Milliseconds(200);
  // Waits for every queued record's report; OK only if each proves storage.
  // kDeadlineExceeded when that takes longer than `timeout`, or once a request
  // to a broker timed out.
  absl::Status FlushAndProve(absl::Duration timeout);
  static void OnDeliveryReport(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque);
  static void OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf);
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque);

  common::Logger& log_;
  Metrics* metrics_ = nullptr;
  std::string transactional_id_;
  std::string checkpoint_topic_;
  // Which records of the open transaction the broker is proven to hold.
  TransactionProof proof_;
  // A request timed out since the transaction began (librdkafka then dropped
  // that connection): a path to a broker went silent. Set by the error callback
  // (_TIMED_OUT, librdkafka before 2.12) or the log line (IsRequestTimeoutLog);
  // both run on librdkafka's threads.
  std::atomic<bool> request_timed_out_ = false;
  // The commit under way (its thread), and how to stop it early.
  std::future<absl::Status> commit_;
  std::atomic<bool> cancel_commit_ = false;
  common::KafkaClient rk_;
  TopicHandles topics_;  // Released before rk_ (declared after it).
};

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_KAFKA_TRANSACTIONS_H_

// TransactionProof: whether the broker is proven to hold every record of one Kafka
// transaction. Pure: KafkaTransactions feeds it one Expect() per record
// it queues and one Report() per delivery report librdkafka serves.
//
// A commit may cover a record only when its report proves storage (no error, an
// offset, persisted: DeliveryReportStatus in kafka_sink.h). librdkafka reports
// some records delivered that no broker stored: implicitly acknowledged ones
// (offset -1001), and those a broker answered DUPLICATE_SEQUENCE_NUMBER (offset -1;
// librdkafka's mock cluster answers that for records it never wrote, and then for
// every later batch of the partition in that producer session). Its commit does
// not fail for them, so without this a committed checkpoint would cover rows that
// no consumer will ever see.
//
// Reports carry the generation they were queued in: a late report of an aborted
// transaction never counts for the next one.
#ifndef PUBLISHER_DELIVERY_TRANSACTION_PROOF_H_
#define PUBLISHER_DELIVERY_TRANSACTION_PROOF_H_

#include <cstdint>

#include "absl/status/status.h"

namespace publisher {

class TransactionProof {
 public:
  // A new Kafka transaction: forgets the previous one. Returns its generation.
  uint64_t Begin() {
    ++generation_;
    expected_ = proven_ = 0;
    failure_ = absl::OkStatus();
    return generation_;
  }
  // One more record queued in the open transaction.
  void Expect() { ++expected_; }
  // The delivery report of a record queued in `generation`, as
  // DeliveryReportStatus judged it.
  void Report(uint64_t generation, const absl::Status& status);

  // OK when every record queued since Begin() has a report proving storage.
  // Otherwise kUnavailable naming the first failure, or how many records have no
  // report yet: the transaction must be aborted and produced again.
  [[nodiscard]] absl::Status Verdict() const;

  uint64_t generation() const { return generation_; }

 private:
  uint64_t generation_ = 0;
  uint64_t expected_ = 0;
  uint64_t proven_ = 0;
  absl::Status failure_;  // The first report without proof.
};

}  // namespace publisher

#endif  // PUBLISHER_DELIVERY_TRANSACTION_PROOF_H_

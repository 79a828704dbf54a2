// ProcessedTable: the processed-messages table in the service's own database, the
// memory that makes applying an event idempotent. SQL only, through Database.
//
//   id               the envelope id (primary key: a second claim finds it);
//   topic, kafka_partition, kafka_offset
//                    where the record that applied it was read;
//   processed_at     when.
//
// Claim() runs inside the transaction that applies the event's effect, so the id
// is recorded if and only if the effect commits.
//
// Prune() deletes ids older than the retention, but only those read below the
// consumer group's committed offset of their partition: a record at or above it
// may be read again after a crash or rebalance, however old its row is (a consumer
// that was down for longer than the retention). Duplicates that can still arrive
// after an id was pruned are those the publisher produces more than the retention
// after the original: a publisher rewinding to rows it published that long ago
// (it was down, or could not reach Kafka, for that long), or someone replaying the
// topic (an offset reset, a dead-letter re-drive of an applied event). Choose a
// retention longer than any such outage; the default is 7 days.
#ifndef CONSUMER_PROCESSED_TABLE_H_
#define CONSUMER_PROCESSED_TABLE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "consumer/database.h"
#include "consumer/inbound_record.h"

namespace consumer {

class ProcessedTable {
 public:
  // `name` may be schema-qualified ("app.processed_messages").
  explicit ProcessedTable(std::string name) : name_(std::move(name)) {}

  // CREATE TABLE IF NOT EXISTS, with the index Prune() uses.
  [[nodiscard]] absl::Status Create(Database& db);

  // Records `id` as processed by `r`; false when it already was (a duplicate).
  [[nodiscard]] absl::StatusOr<bool> Claim(Database& db, const std::string& id,
                                           const InboundRecord& r);

  // Deletes the rows of `tp` read below `committed_offset` and processed more than
  // `retention` ago, in batches; returns how many.
  [[nodiscard]] absl::StatusOr<int64_t> Prune(Database& db, const TopicPartition& tp,
                                              int64_t committed_offset,
                                              absl::Duration retention);

  const std::string& name() const { return name_; }

 private:
  std::string Quoted(Database& db) const;
  std::string name_;
};

}  // namespace consumer

#endif  // CONSUMER_PROCESSED_TABLE_H_

// KafkaSource: RecordSource over librdkafka's high-level consumer. The librdkafka
// shell of the consumer kit.
//
// Offsets are committed by librdkafka's auto-commit, but only offsets the kit
// stored (enable.auto.offset.store=false): Done() stores one after the record's
// effect committed. Stored offsets are also committed synchronously when
// partitions are revoked and when the consumer closes, so a rebalance or a clean
// stop re-reads nothing; a crash re-reads at most auto.commit.interval.ms of
// records, which ApplyOnce then skips.
//
// read_committed: a publisher in exactly-once mode aborts Kafka transactions, and
// their records must not be applied.
#ifndef CONSUMER_KAFKA_KAFKA_SOURCE_H_
#define CONSUMER_KAFKA_KAFKA_SOURCE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/kafka/handles.h"
#include "common/log.h"
#include "consumer/record_source.h"

namespace consumer {

struct KafkaSourceOptions {
  std::string brokers;
  std::string group;
  std::vector<std::string> topics;
  // librdkafka properties applied last (-X), e.g. auto.commit.interval.ms.
  std::vector<std::pair<std::string, std::string>> properties;
};

class KafkaSource : public RecordSource {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<KafkaSource>> Create(
      const KafkaSourceOptions& options, common::Logger& log);
  // Close()s first if not closed yet.
  ~KafkaSource() override;

  absl::StatusOr<std::optional<InboundRecord>> Poll(absl::Duration timeout) override;
  absl::Status Pause(const TopicPartition& tp) override;
  absl::Status ResumeFrom(const TopicPartition& tp, int64_t offset) override;
  absl::Status Done(const TopicPartition& tp, int64_t offset) override;
  absl::StatusOr<std::vector<std::pair<TopicPartition, int64_t>>> Committed() override;

  // Commits the stored offsets and leaves the group (its partitions go to the
  // others at once, not after session.timeout.ms).
  absl::Status Close();

 private:
  explicit KafkaSource(common::Logger& log) : log_(log) {}
  friend struct KafkaSourceCallbacks;  // librdkafka's callbacks (kafka_source.cc).
  void Rebalance(int err, rd_kafka_topic_partition_list_t* partitions);

  common::Logger& log_;
  common::KafkaClient rk_;
  bool closed_ = false;
};

}  // namespace consumer

#endif  // CONSUMER_KAFKA_KAFKA_SOURCE_H_

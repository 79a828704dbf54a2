// RecordSource: the consumer group's side of the consumer kit, as OutboxConsumer
// needs it. An interface, so that the loop is tested with a fake; KafkaSource
// (kafka_source.h) is the librdkafka shell.
#ifndef CONSUMER_RECORD_SOURCE_H_
#define CONSUMER_RECORD_SOURCE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "consumer/inbound_record.h"

namespace consumer {

class RecordSource {
 public:
  virtual ~RecordSource() = default;

  // The next record within `timeout`, or nullopt. Records of one partition come in
  // offset order. A rebalance is served inside: partitions taken away are named to
  // the revoke listener first, before anything of theirs is committed or lost.
  [[nodiscard]] virtual absl::StatusOr<std::optional<InboundRecord>> Poll(
      absl::Duration timeout) = 0;

  // Stops fetching `tp` (its held record waits for a retry).
  [[nodiscard]] virtual absl::Status Pause(const TopicPartition& tp) = 0;
  // Fetches `tp` again, from `offset`.
  [[nodiscard]] virtual absl::Status ResumeFrom(const TopicPartition& tp,
                                                int64_t offset) = 0;

  // The record at `offset` of `tp` is done (applied, skipped or dead-lettered),
  // and so is every earlier one: the group may commit offset + 1.
  [[nodiscard]] virtual absl::Status Done(const TopicPartition& tp, int64_t offset) = 0;

  // The partitions assigned now, with the group's committed offset of each (-1
  // when none was committed).
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::pair<TopicPartition, int64_t>>>
  Committed() = 0;

  using RevokeListener = std::function<void(const std::vector<TopicPartition>&)>;
  void set_revoke_listener(RevokeListener listener) { on_revoke_ = std::move(listener); }

 protected:
  RevokeListener on_revoke_;
};

}  // namespace consumer

#endif  // CONSUMER_RECORD_SOURCE_H_

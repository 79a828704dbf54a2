// ReadCheckpointTopic: the librdkafka shell that reads --checkpoint-topic back
// (--delivery=exactly-once): every partition from its start to its end
// as of the call, with isolation.level=read_committed, so that only checkpoints of
// committed Kafka transactions count (against a broker that writes transaction
// markers; librdkafka 2.0.2's mock writes none: tests/publisher/
// mock_transactions_test.cc). LatestCheckpoint (publisher/delivery/checkpoint.h) picks
// the publisher's own from what it returns.
//
// Call it after init_transactions: that aborts what an earlier instance of the
// same transactional id left open, which would otherwise hold a read_committed
// reader short of the end.
#ifndef PUBLISHER_KAFKA_CHECKPOINT_READER_H_
#define PUBLISHER_KAFKA_CHECKPOINT_READER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "publisher/delivery/checkpoint.h"
#include "publisher/kafka/kafka_options.h"

namespace publisher {

// kNotFound (with the fix) when the topic does not exist; kUnavailable when the
// brokers do not answer or the end is not reached by `timeout`.
[[nodiscard]] absl::StatusOr<std::vector<CheckpointRecord>> ReadCheckpointTopic(
    const KafkaOptions& options, const std::string& topic, absl::Duration timeout);

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_CHECKPOINT_READER_H_

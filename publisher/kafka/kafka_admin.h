// CreateCompactedTopic: the librdkafka admin shell that creates the exactly-once
// checkpoint topic (--checkpoint-topic) when it is missing and --create allows.
#ifndef PUBLISHER_KAFKA_KAFKA_ADMIN_H_
#define PUBLISHER_KAFKA_KAFKA_ADMIN_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "publisher/kafka/kafka_options.h"

namespace publisher {

// Creates `topic` with one partition, the cluster's default replication factor
// and cleanup.policy=compact. OK when it exists already; kUnimplemented when the
// cluster says it does not offer CreateTopics; kUnavailable when no answer comes
// by `timeout` (librdkafka's mock cluster never answers it); else the broker's
// refusal.
[[nodiscard]] absl::Status CreateCompactedTopic(const KafkaOptions& kafka,
                                                const std::string& topic,
                                                absl::Duration timeout);

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_KAFKA_ADMIN_H_

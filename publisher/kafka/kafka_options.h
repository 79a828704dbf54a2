// What the publisher's Kafka shells are told. The program builds these from its
// Config (publisher/program/options.h), which holds the flags' defaults.
#ifndef PUBLISHER_KAFKA_KAFKA_OPTIONS_H_
#define PUBLISHER_KAFKA_KAFKA_OPTIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace publisher {

// Every client: where the cluster is, the user's librdkafka properties, and the
// in-flight limits, which size the producers' local queues.
struct KafkaOptions {
  std::string brokers;                                          // --brokers
  std::vector<std::pair<std::string, std::string>> properties;  // -X, in order.
  int64_t max_in_flight = 0;                                    // --max-in-flight
  int64_t max_in_flight_bytes = 0;                              // --max-in-flight-bytes
};

// --delivery=exactly-once: the transactional producer and its checkpoints.
struct ExactlyOnceOptions {
  KafkaOptions kafka;
  std::string transactional_id;         // --transactional-id, or its default.
  std::string checkpoint_topic;         // --checkpoint-topic
  bool create = true;                   // --create: the checkpoint topic may be created.
  absl::Duration transaction_interval;  // --transaction-interval
};

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_KAFKA_OPTIONS_H_

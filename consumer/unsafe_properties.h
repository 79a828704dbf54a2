// Kafka client settings the consumer kit refuses, because each would break what
// the kit promises: an event's effect applied exactly once, in offset order.
#ifndef CONSUMER_UNSAFE_PROPERTIES_H_
#define CONSUMER_UNSAFE_PROPERTIES_H_

#include "absl/status/status.h"
#include "common/kafka_properties.h"

namespace consumer {

// kInvalidArgument naming each refused setting and what it would break; OK when
// there is none.
[[nodiscard]] absl::Status RefuseUnsafeProperties(const common::KafkaProperties& p);

}  // namespace consumer

#endif  // CONSUMER_UNSAFE_PROPERTIES_H_

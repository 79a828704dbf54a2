// OutboxRecord: one Kafka record as every sink takes it. The mapper fills it from an
// outbox row or message (publisher/mapping/mapper.h), the dead-letter policy wraps a
// failed one, and the sinks produce it.
#ifndef PUBLISHER_DELIVERY_OUTBOX_RECORD_H_
#define PUBLISHER_DELIVERY_OUTBOX_RECORD_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace publisher {

struct OutboxRecord {
  std::string topic;
  std::string key;
  std::string value;  // Serialized outbox.v1.Envelope (or a dead letter's content).
  // A null value rather than an empty one: --value-format payload with a NULL
  // payload, as Debezium writes it (a tombstone, on a compacted topic).
  bool value_null = false;
  std::vector<std::pair<std::string, std::string>> headers;
  int64_t timestamp_ms = 0;
  std::string id;  // For logs.
};

// What a produced record is: an outbox event, or the dead-letter copy of one that
// could not be published (its acknowledgement stands in for the event's).
enum class RecordKind { kEvent, kDeadLetter };

}  // namespace publisher

#endif  // PUBLISHER_DELIVERY_OUTBOX_RECORD_H_

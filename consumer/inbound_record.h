// InboundRecord: one Kafka record as the consumer kit handles it, copied out of
// librdkafka's message so that it may outlive the poll that returned it (a record
// held for a retry does). Pure data.
#ifndef CONSUMER_INBOUND_RECORD_H_
#define CONSUMER_INBOUND_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"

namespace consumer {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  friend bool operator==(const TopicPartition& a, const TopicPartition& b) {
    return a.partition == b.partition && a.topic == b.topic;
  }
  template <typename H>
  friend H AbslHashValue(H h, const TopicPartition& tp) {
    return H::combine(std::move(h), tp.topic, tp.partition);
  }
};

struct InboundRecord {
  TopicPartition source;
  int64_t offset = -1;
  std::string key;
  std::string value;
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<int64_t> timestamp_ms;  // The record's, when the broker gave one.

  // The first header named `name`, or nullptr.
  const std::string* Header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

}  // namespace consumer

#endif  // CONSUMER_INBOUND_RECORD_H_

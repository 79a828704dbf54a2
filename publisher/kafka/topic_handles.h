// TopicHandles: librdkafka topic handles by name, made on first use and kept. A
// message produced by topic name makes librdkafka look the topic up under its
// lock (a list search and reference counting) every time; with a handle it does
// not. Part of the librdkafka shell; one per producer, on the relay's thread.
#ifndef PUBLISHER_KAFKA_TOPIC_HANDLES_H_
#define PUBLISHER_KAFKA_TOPIC_HANDLES_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "common/kafka/handles.h"

namespace publisher {

class TopicHandles {
 public:
  TopicHandles() = default;
  TopicHandles(const TopicHandles&) = delete;
  TopicHandles& operator=(const TopicHandles&) = delete;

  // The handle for `topic` on `rk` (null only if librdkafka refuses the name). A
  // template that routes to ever new topics does not grow this without bound: past
  // kMaxHandles it starts over (messages hold references of their own).
  rd_kafka_topic_t* Get(rd_kafka_t* rk, const std::string& topic);

  // Releases every handle (they must go before the producer does).
  void Clear() { handles_.clear(); }
  size_t size() const { return handles_.size(); }

  static constexpr size_t kMaxHandles = 1024;

 private:
  absl::flat_hash_map<std::string, common::KafkaTopic> handles_;
};

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_TOPIC_HANDLES_H_

#include "publisher/kafka/topic_handles.h"

#include <librdkafka/rdkafka.h>

namespace publisher {

rd_kafka_topic_t* TopicHandles::Get(rd_kafka_t* rk, const std::string& topic) {
  auto it = handles_.find(topic);
  if (it != handles_.end()) return it->second;
  if (handles_.size() >= kMaxHandles) Clear();
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rkt != nullptr) handles_.emplace(topic, rkt);
  return rkt;
}

void TopicHandles::Clear() {
  for (auto& [name, rkt] : handles_) rd_kafka_topic_destroy(rkt);
  handles_.clear();
}

}  // namespace publisher

#include "publisher/kafka/topic_handles.h"

#include <utility>

namespace publisher {

rd_kafka_topic_t* TopicHandles::Get(rd_kafka_t* rk, const std::string& topic) {
  auto it = handles_.find(topic);
  if (it != handles_.end()) return it->second.get();
  if (handles_.size() >= kMaxHandles) Clear();
  common::KafkaTopic rkt(rd_kafka_topic_new(rk, topic.c_str(), nullptr));
  if (rkt == nullptr) return nullptr;
  return handles_.emplace(topic, std::move(rkt)).first->second.get();
}

}  // namespace publisher

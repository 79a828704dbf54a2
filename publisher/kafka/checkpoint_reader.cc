// ReadCheckpointTopic: metadata, watermarks, then a consumer without a group per call.
#include "publisher/kafka/checkpoint_reader.h"

#include <librdkafka/rdkafka.h>

#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace publisher {
namespace {

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct TopicDeleter {
  void operator()(rd_kafka_topic_t* rkt) const { rd_kafka_topic_destroy(rkt); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
using KafkaConsumer = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

int Ms(absl::Duration d) {
  return static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(d)));
}

}  // namespace

absl::StatusOr<std::vector<CheckpointRecord>> ReadCheckpointTopic(
    const KafkaOptions& options, const std::string& topic, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The user's -X properties first (security settings apply to this client too),
  // then what this reader needs; producer-only properties are left out.
  std::vector<std::pair<std::string, std::string>> properties = {
      {"bootstrap.servers", options.brokers}};
  for (const auto& kv : options.properties) properties.push_back(kv);
  // No group: a consumer group's partitions wait for its coordinator before they
  // are fetched (up to half a second at every start), and a one-shot reader
  // commits no offsets. Each partition is read with the simple consumer API.
  properties.insert(properties.end(), {{"isolation.level", "read_committed"},
                                       // The end under read_committed is the last
                                       // stable offset, and a transaction marker is
                                       // never delivered: EOF says "the end" for both.
                                       {"enable.partition.eof", "true"},
                                       // The end is known only from a fetch that
                                       // comes back empty (the last offset is a
                                       // marker): not worth the 500 ms a broker
                                       // holds one by default, at every start.
                                       {"fetch.wait.max.ms", "10"}});
  for (const auto& [key, value] : properties) {
    // Producer properties in -X do not apply to a consumer: skip what it refuses.
    rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof(err));
  }
  rd_kafka_t* raw = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  if (raw == nullptr) {
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create a Kafka consumer: ", err));
  }
  KafkaConsumer rk(raw);

  const struct rd_kafka_metadata* md = nullptr;
  rd_kafka_resp_err_t e =
      rd_kafka_metadata(rk.get(), 1, nullptr, &md, Ms(deadline - absl::Now()));
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat("cannot read the checkpoint topic ", topic,
                                               ": ", rd_kafka_err2str(e)));
  }
  std::vector<int32_t> partitions;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (topic != md->topics[i].topic || md->topics[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
      continue;
    for (int p = 0; p < md->topics[i].partition_cnt; ++p)
      partitions.push_back(md->topics[i].partitions[p].id);
  }
  rd_kafka_metadata_destroy(md);
  if (partitions.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "the checkpoint topic ", topic,
        " does not exist: create it compacted (cleanup.policy=compact, one partition, "
        "replication factor 3)"));
  }

  // Where each partition starts and ends now: read from one to the other.
  std::map<int32_t, int64_t> start, end;
  for (int32_t p : partitions) {
    int64_t low = 0, high = 0;
    e = rd_kafka_query_watermark_offsets(rk.get(), topic.c_str(), p, &low, &high,
                                         Ms(deadline - absl::Now()));
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return absl::UnavailableError(absl::StrCat("cannot read the end of ", topic, " [",
                                                 p, "]: ", rd_kafka_err2str(e)));
    }
    if (high > low) {
      start[p] = low;
      end[p] = high;
    }
  }
  std::vector<CheckpointRecord> records;
  if (end.empty()) return records;
  std::unique_ptr<rd_kafka_topic_t, TopicDeleter> rkt(
      rd_kafka_topic_new(rk.get(), topic.c_str(), nullptr));
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk.get()));
  std::vector<int32_t> started;
  // Stopped before the topic and queue go, whatever the way out.
  struct Stopper {
    rd_kafka_topic_t* rkt;
    std::vector<int32_t>& partitions;
    ~Stopper() {
      for (int32_t p : partitions) rd_kafka_consume_stop(rkt, p);
    }
  } stopper{rkt.get(), started};
  for (const auto& [p, low] : start) {
    // An absolute offset: a logical one (BEGINNING) is looked up first, and that
    // lookup waits half a second when the partition's leader is not joined yet.
    if (rd_kafka_consume_start_queue(rkt.get(), p, low, queue.get()) != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot read ", topic, " [", p,
                       "]: ", rd_kafka_err2str(rd_kafka_last_error())));
    }
    started.push_back(p);
  }
  while (!end.empty()) {
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(absl::StrCat("reading the checkpoint topic ", topic,
                                                 " did not reach its end within ",
                                                 absl::FormatDuration(timeout)));
    }
    rd_kafka_message_t* m = rd_kafka_consume_queue(queue.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      CheckpointRecord r;
      r.partition = m->partition;
      r.offset = m->offset;
      if (m->key) r.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload) r.value.assign(static_cast<const char*>(m->payload), m->len);
      auto it = end.find(m->partition);
      if (it != end.end() && m->offset + 1 >= it->second) end.erase(it);
      records.push_back(std::move(r));
    } else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      end.erase(m->partition);
    }
    rd_kafka_message_destroy(m);
  }
  return records;
}

}  // namespace publisher

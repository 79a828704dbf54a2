// ReadCheckpointTopic in four steps: a consumer without a group, the topic's
// partitions, where each one starts and ends now, then reading from one to the other.
#include "publisher/kafka/checkpoint_reader.h"

#include <librdkafka/rdkafka.h>

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/kafka/handles.h"
#include "common/status_macros.h"

namespace publisher {
namespace {

int Ms(absl::Duration d) {
  return static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(d)));
}

// The offsets [start, end) of one partition as of the call.
struct Range {
  int64_t start;
  int64_t end;
};

// A consumer without a group: a consumer group's partitions wait for its
// coordinator before they are fetched (up to half a second at every start), and a
// one-shot reader commits no offsets. Each partition is read with the simple
// consumer API.
absl::StatusOr<common::KafkaClient> NewReader(const KafkaOptions& options) {
  // The user's -X properties first (security settings apply to this client too),
  // then what this reader needs. Producer properties in -X do not apply to a
  // consumer: what it refuses is left out.
  std::vector<std::pair<std::string, std::string>> properties = {
      {"bootstrap.servers", options.brokers}};
  properties.insert(properties.end(), options.properties.begin(), options.properties.end());
  absl::StatusOr<common::KafkaConf> conf = common::NewKafkaConf(
      std::move(properties),
      {{"isolation.level", "read_committed"},
       // The end under read_committed is the last stable offset, and a transaction
       // marker is never delivered: EOF says "the end" for both.
       {"enable.partition.eof", "true"},
       // The end is known only from a fetch that comes back empty (the last offset
       // is a marker): not worth the 500 ms a broker holds one by default, at every
       // start.
       {"fetch.wait.max.ms", "10"}},
      common::RefusedProperty::kSkip);
  if (!conf.ok()) return conf.status();
  return common::NewKafkaClient(RD_KAFKA_CONSUMER, *std::move(conf), {}, "a Kafka consumer");
}

// The topic's partitions; kNotFound (with the fix) when it does not exist.
absl::StatusOr<std::vector<int32_t>> Partitions(rd_kafka_t* rk, const std::string& topic,
                                                absl::Time deadline) {
  const struct rd_kafka_metadata* raw = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 1, nullptr, &raw, Ms(deadline - absl::Now()));
  common::KafkaMetadata md(raw);
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
  if (partitions.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "the checkpoint topic ", topic,
        " does not exist: create it compacted (cleanup.policy=compact, one partition, "
        "replication factor 3)"));
  }
  return partitions;
}

// Where each partition that holds records starts and ends now.
absl::StatusOr<std::map<int32_t, Range>> Ranges(rd_kafka_t* rk, const std::string& topic,
                                                const std::vector<int32_t>& partitions,
                                                absl::Time deadline) {
  std::map<int32_t, Range> ranges;
  for (int32_t p : partitions) {
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
        rk, topic.c_str(), p, &low, &high, Ms(deadline - absl::Now()));
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return absl::UnavailableError(absl::StrCat("cannot read the end of ", topic, " [",
                                                 p, "]: ", rd_kafka_err2str(e)));
    }
    if (high > low) ranges[p] = {low, high};
  }
  return ranges;
}

// Every record of `ranges`, in the order they arrive (each partition's in order).
absl::StatusOr<std::vector<CheckpointRecord>> ReadRanges(
    rd_kafka_t* rk, const std::string& topic, std::map<int32_t, Range> ranges,
    absl::Time deadline, absl::Duration timeout) {
  std::vector<CheckpointRecord> records;
  if (ranges.empty()) return records;
  common::KafkaTopic rkt(rd_kafka_topic_new(rk, topic.c_str(), nullptr));
  common::KafkaQueue queue(rd_kafka_queue_new(rk));
  // Stopped before the topic and queue go, whatever the way out.
  struct Started {
    rd_kafka_topic_t* rkt;
    std::vector<int32_t> partitions;
    ~Started() {
      for (int32_t p : partitions) rd_kafka_consume_stop(rkt, p);
    }
  } started{rkt.get(), {}};
  for (const auto& [p, range] : ranges) {
    // An absolute offset: a logical one (BEGINNING) is looked up first, and that
    // lookup waits half a second when the partition's leader is not joined yet.
    if (rd_kafka_consume_start_queue(rkt.get(), p, range.start, queue.get()) != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot read ", topic, " [", p,
                       "]: ", rd_kafka_err2str(rd_kafka_last_error())));
    }
    started.partitions.push_back(p);
  }
  while (!ranges.empty()) {
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(absl::StrCat("reading the checkpoint topic ", topic,
                                                 " did not reach its end within ",
                                                 absl::FormatDuration(timeout)));
    }
    common::KafkaMessage m(rd_kafka_consume_queue(queue.get(), 100));
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      ranges.erase(m->partition);
      continue;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    CheckpointRecord r;
    r.partition = m->partition;
    r.offset = m->offset;
    if (m->key) r.key.assign(static_cast<const char*>(m->key), m->key_len);
    if (m->payload) r.value.assign(static_cast<const char*>(m->payload), m->len);
    auto it = ranges.find(m->partition);
    if (it != ranges.end() && m->offset + 1 >= it->second.end) ranges.erase(it);
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace

absl::StatusOr<std::vector<CheckpointRecord>> ReadCheckpointTopic(
    const KafkaOptions& options, const std::string& topic, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  ASSIGN_OR_RETURN(common::KafkaClient rk, NewReader(options));
  ASSIGN_OR_RETURN(std::vector<int32_t> partitions, Partitions(rk.get(), topic, deadline));
  ASSIGN_OR_RETURN(auto ranges, Ranges(rk.get(), topic, partitions, deadline));
  return ReadRanges(rk.get(), topic, std::move(ranges), deadline, timeout);
}

}  // namespace publisher

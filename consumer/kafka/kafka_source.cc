// KafkaSource: librdkafka's consumer, its rebalance callback and offset store.
#include "consumer/kafka/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/kafka/client.h"
#include "common/status_macros.h"

namespace consumer {
namespace {

constexpr int kSeekTimeoutMs = 10000;
constexpr int kCommittedTimeoutMs = 10000;

// A partition list of one.
struct OnePartition {
  OnePartition(const TopicPartition& tp, int64_t offset = RD_KAFKA_OFFSET_INVALID)
      : list(rd_kafka_topic_partition_list_new(1)) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset =
        offset;
  }
  // The first error: the call's, else the partition's.
  absl::Status Status(rd_kafka_resp_err_t call, absl::string_view what) const {
    rd_kafka_resp_err_t err = call ? call : list->elems[0].err;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(what, " ", list->elems[0].topic,
                                                      "[", list->elems[0].partition,
                                                      "]: ", rd_kafka_err2str(err)));
  }
  common::KafkaPartitionList list;
};

std::vector<TopicPartition> Partitions(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> out;
  for (int i = 0; i < list->cnt; ++i) {
    out.push_back({list->elems[i].topic, list->elems[i].partition});
  }
  return out;
}

}  // namespace

struct KafkaSourceCallbacks {
  static void OnRebalance(rd_kafka_t*, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t* partitions, void* opaque) {
    static_cast<KafkaSource*>(opaque)->Rebalance(err, partitions);
  }
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
    static_cast<KafkaSource*>(opaque)->log_.Warn(
        "Kafka consumer error",
        {{"error", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err))},
         {"reason", reason},
         {"fatal", err == RD_KAFKA_RESP_ERR__FATAL}});
    (void)rk;
  }
  // librdkafka's own lines, as the kit's log lines (not raw text on stderr).
  static void OnLog(const rd_kafka_t* rk, int level, const char* facility,
                    const char* line) {
    common::LogLibrdkafka(static_cast<KafkaSource*>(rd_kafka_opaque(rk))->log_, level,
                          facility, line);
  }
};

absl::StatusOr<std::unique_ptr<KafkaSource>> KafkaSource::Create(
    const KafkaSourceOptions& options, common::Logger& log) {
  std::unique_ptr<KafkaSource> s(new KafkaSource(log));
  std::vector<std::pair<std::string, std::string>> properties = {
      {"bootstrap.servers", options.brokers},
      {"group.id", options.group},
      {"client.id", "outbox-consumer"},
      // Only what Done() stored is committed: never an offset whose effect has not
      // committed in the database.
      {"enable.auto.commit", "true"},
      {"enable.auto.offset.store", "false"},
      {"auto.commit.interval.ms", "1000"},
      // A new group starts at the beginning: no event is skipped.
      {"auto.offset.reset", "earliest"},
      {"isolation.level", "read_committed"},
      // A rebalance moves only the partitions that change owner; the other
      // instances apply theirs throughout (KIP-429). librdkafka's default, eager
      // rebalancing, stops the whole group at every join and leave.
      {"partition.assignment.strategy", "cooperative-sticky"},
      // An instance that died without leaving (kill -9, a lost host) hands its
      // partitions on after 10 s, not librdkafka's 45.
      {"session.timeout.ms", "10000"},
      {"heartbeat.interval.ms", "3000"},
  };
  ASSIGN_OR_RETURN(common::KafkaConf conf,
                   common::NewKafkaConf(std::move(properties), options.properties));
  ASSIGN_OR_RETURN(
      s->rk_, common::NewKafkaClient(RD_KAFKA_CONSUMER, std::move(conf),
                                     {.opaque = s.get(),
                                      .log = &KafkaSourceCallbacks::OnLog,
                                      .error = &KafkaSourceCallbacks::OnError,
                                      .rebalance = &KafkaSourceCallbacks::OnRebalance},
                                     "the Kafka consumer"));
  rd_kafka_poll_set_consumer(s->rk_.get());
  common::KafkaPartitionList topics(
      rd_kafka_topic_partition_list_new(static_cast<int>(options.topics.size())));
  for (const std::string& t : options.topics) {
    rd_kafka_topic_partition_list_add(topics.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  rd_kafka_resp_err_t e = rd_kafka_subscribe(s->rk_.get(), topics.get());
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot subscribe to the topics: ", rd_kafka_err2str(e)));
  }
  return s;
}

KafkaSource::~KafkaSource() {
  if (rk_ == nullptr) return;
  Close().IgnoreError();
}

absl::Status KafkaSource::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  rd_kafka_resp_err_t e = rd_kafka_consumer_close(rk_.get());
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(
        absl::StrCat("closing the Kafka consumer: ", rd_kafka_err2str(e)));
  }
  return absl::OkStatus();
}

void KafkaSource::Rebalance(int err, rd_kafka_topic_partition_list_t* partitions) {
  bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk_.get()), "COOPERATIVE") == 0;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    log_.Info("partitions assigned", {{"count", static_cast<int64_t>(partitions->cnt)}});
    if (cooperative) {
      if (common::KafkaError e{rd_kafka_incremental_assign(rk_.get(), partitions)}) {
        log_.Error("cannot take the assigned partitions",
                   {{"error", rd_kafka_error_string(e.get())}});
      }
    } else {
      rd_kafka_assign(rk_.get(), partitions);
    }
    return;
  }
  // Revoked (or lost): forget held records first, then commit what is done, so
  // that the next owner starts right after it.
  if (on_revoke_) on_revoke_(Partitions(partitions));
  log_.Info("partitions revoked", {{"count", static_cast<int64_t>(partitions->cnt)}});
  if (!rd_kafka_assignment_lost(rk_.get())) {
    rd_kafka_resp_err_t e = rd_kafka_commit(rk_.get(), nullptr, /*async=*/0);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR__NO_OFFSET) {
      log_.Warn(
          "cannot commit offsets before the rebalance (the next owner re-reads "
          "and skips some records)",
          {{"error", rd_kafka_err2str(e)}});
    }
  }
  if (cooperative) {
    common::KafkaError ignored{rd_kafka_incremental_unassign(rk_.get(), partitions)};
  } else {
    rd_kafka_assign(rk_.get(), nullptr);
  }
}

absl::StatusOr<std::optional<InboundRecord>> KafkaSource::Poll(absl::Duration timeout) {
  common::KafkaMessage m(
      rd_kafka_consumer_poll(rk_.get(), static_cast<int>(absl::ToInt64Milliseconds(timeout))));
  if (m == nullptr) return std::nullopt;
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::string what = rd_kafka_message_errstr(m.get());
    rd_kafka_resp_err_t err = m->err;
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
      char reason[512];
      rd_kafka_fatal_error(rk_.get(), reason, sizeof(reason));
      return absl::InternalError(absl::StrCat("the Kafka consumer failed: ", reason));
    }
    if (err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      log_.Warn("Kafka consumer error", {{"error", what}});
    }
    return std::nullopt;
  }
  InboundRecord r;
  r.source = {rd_kafka_topic_name(m->rkt), m->partition};
  r.offset = m->offset;
  if (m->key != nullptr) r.key.assign(static_cast<const char*>(m->key), m->key_len);
  if (m->payload != nullptr) {
    r.value.assign(static_cast<const char*>(m->payload), m->len);
  }
  r.headers = common::MessageHeaders(m.get());
  rd_kafka_timestamp_type_t type;
  int64_t timestamp = rd_kafka_message_timestamp(m.get(), &type);
  if (type != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE) r.timestamp_ms = timestamp;
  return r;
}

absl::Status KafkaSource::Pause(const TopicPartition& tp) {
  OnePartition p(tp);
  return p.Status(rd_kafka_pause_partitions(rk_.get(), p.list.get()), "pausing");
}

absl::Status KafkaSource::ResumeFrom(const TopicPartition& tp, int64_t offset) {
  // Seek first, waiting for the fetcher: nothing fetched before the pause may
  // come through after it.
  OnePartition p(tp, offset);
  if (common::KafkaError e{rd_kafka_seek_partitions(rk_.get(), p.list.get(), kSeekTimeoutMs)}) {
    return absl::FailedPreconditionError(absl::StrCat(
        "seeking ", tp.topic, "[", tp.partition, "]: ", rd_kafka_error_string(e.get())));
  }
  if (absl::Status s = p.Status(RD_KAFKA_RESP_ERR_NO_ERROR, "seeking"); !s.ok()) return s;
  return p.Status(rd_kafka_resume_partitions(rk_.get(), p.list.get()), "resuming");
}

absl::Status KafkaSource::Done(const TopicPartition& tp, int64_t offset) {
  OnePartition p(tp, offset + 1);
  return p.Status(rd_kafka_offsets_store(rk_.get(), p.list.get()), "storing the offset of");
}

absl::StatusOr<std::vector<std::pair<TopicPartition, int64_t>>> KafkaSource::Committed() {
  rd_kafka_topic_partition_list_t* raw = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_assignment(rk_.get(), &raw);
  common::KafkaPartitionList list(raw);
  if (e == RD_KAFKA_RESP_ERR_NO_ERROR)
    e = rd_kafka_committed(rk_.get(), list.get(), kCommittedTimeoutMs);
  std::vector<std::pair<TopicPartition, int64_t>> out;
  if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& p = list->elems[i];
      out.push_back(
          {{p.topic, p.partition},
           p.err == RD_KAFKA_RESP_ERR_NO_ERROR && p.offset >= 0 ? p.offset : -1});
    }
  }
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(
        absl::StrCat("reading the committed offsets: ", rd_kafka_err2str(e)));
  }
  return out;
}

}  // namespace consumer

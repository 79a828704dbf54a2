// CreateCompactedTopic: one CreateTopics request through a short-lived client.
#include "publisher/kafka/kafka_admin.h"

#include <librdkafka/rdkafka.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/handles.h"
#include "publisher/kafka/kafka_sink.h"

namespace publisher {

absl::Status CreateCompactedTopic(const KafkaOptions& kafka, const std::string& topic,
                                  absl::Duration timeout) {
  absl::StatusOr<common::KafkaConf> conf =
      common::NewKafkaConf({{"bootstrap.servers", kafka.brokers}}, kafka.properties);
  if (!conf.ok()) return conf.status();
  absl::StatusOr<common::KafkaClient> rk =
      common::NewKafkaClient(RD_KAFKA_PRODUCER, *std::move(conf), {}, "a Kafka client");
  if (!rk.ok()) return rk.status();
  // One partition: a key's checkpoints stay in order, and there is one key per
  // publisher. -1: the cluster's default replication factor.
  char err[512];
  common::KafkaNewTopic spec(rd_kafka_NewTopic_new(topic.c_str(), 1, -1, err, sizeof(err)));
  if (spec == nullptr) return absl::InvalidArgumentError(err);
  rd_kafka_NewTopic_set_config(spec.get(), "cleanup.policy", "compact");
  common::KafkaQueue queue(rd_kafka_queue_new(rk->get()));
  common::KafkaAdminOptions options(
      rd_kafka_AdminOptions_new(rk->get(), RD_KAFKA_ADMIN_OP_CREATETOPICS));
  int ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  rd_kafka_AdminOptions_set_request_timeout(options.get(), ms, err, sizeof(err));
  rd_kafka_NewTopic_t* specs[] = {spec.get()};
  rd_kafka_CreateTopics(rk->get(), specs, 1, options.get(), queue.get());
  common::KafkaEvent event(rd_kafka_queue_poll(queue.get(), ms + 1000));
  std::string what = absl::StrCat("creating the checkpoint topic ", topic);
  if (event == nullptr) return absl::UnavailableError(absl::StrCat(what, ": no answer"));
  rd_kafka_resp_err_t e = rd_kafka_event_error(event.get());
  if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const rd_kafka_CreateTopics_result_t* result =
        rd_kafka_event_CreateTopics_result(event.get());
    size_t n = 0;
    const rd_kafka_topic_result_t** topics =
        result == nullptr ? nullptr : rd_kafka_CreateTopics_result_topics(result, &n);
    if (n == 1) e = rd_kafka_topic_result_error(topics[0]);
  }
  if (e == RD_KAFKA_RESP_ERR_NO_ERROR || e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
    return absl::OkStatus();
  if (e == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE ||
      e == RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": the cluster does not offer CreateTopics"));
  }
  return common::KafkaErrorStatus(e, what);
}

}  // namespace publisher

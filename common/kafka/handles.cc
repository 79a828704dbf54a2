// NewKafkaConf and NewKafkaClient: the one way a configured librdkafka client is made.
#include "common/kafka/handles.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/kafka_properties.h"

namespace common {

absl::StatusOr<KafkaConf> NewKafkaConf(
    std::vector<std::pair<std::string, std::string>> properties,
    const std::vector<std::pair<std::string, std::string>>& overrides,
    RefusedProperty refused) {
  KafkaConf conf(rd_kafka_conf_new());
  char err[512];
  for (const auto& kv : overrides) properties.push_back(kv);
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), err, sizeof(err)) !=
            RD_KAFKA_CONF_OK &&
        refused == RefusedProperty::kFail) {
      return absl::InvalidArgumentError(RefusedPropertyMessage(key, value, err));
    }
  }
  return conf;
}

absl::StatusOr<KafkaClient> NewKafkaClient(rd_kafka_type_t type, KafkaConf conf,
                                           const KafkaCallbacks& callbacks,
                                           absl::string_view what) {
  char err[512];
  if (callbacks.logs_on_poll &&
      rd_kafka_conf_set(conf.get(), "log.queue", "true", err, sizeof(err)) !=
          RD_KAFKA_CONF_OK) {
    return absl::InternalError(absl::StrCat("cannot create ", what, ": ", err));
  }
  rd_kafka_conf_set_opaque(conf.get(), callbacks.opaque);
  if (callbacks.log != nullptr) rd_kafka_conf_set_log_cb(conf.get(), callbacks.log);
  if (callbacks.error != nullptr) rd_kafka_conf_set_error_cb(conf.get(), callbacks.error);
  if (callbacks.delivery != nullptr)
    rd_kafka_conf_set_dr_msg_cb(conf.get(), callbacks.delivery);
  if (callbacks.rebalance != nullptr)
    rd_kafka_conf_set_rebalance_cb(conf.get(), callbacks.rebalance);
  KafkaClient client(rd_kafka_new(type, conf.get(), err, sizeof(err)));
  if (client == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create ", what, ": ", err));
  }
  conf.release();  // The client owns it now.
  if (callbacks.logs_on_poll) rd_kafka_set_log_queue(client.get(), nullptr);
  return client;
}

}  // namespace common

// librdkafka helpers shared by the publisher's and the consumer kit's shells.
#include "common/kafka/client.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/str_cat.h"
#include "common/kafka/handles.h"
#include "common/kafka_properties.h"

namespace common {

LogLevel FromSyslog(int level) {
  if (level <= 4) return LogLevel::kWarn;
  if (level <= 6) return LogLevel::kInfo;
  return LogLevel::kDebug;
}

bool IsRequestTimeoutLog(int level, absl::string_view facility) {
  // librdkafka also logs each timed-out request, at info level, same facility.
  return level <= 4 && facility == "REQTMOUT";
}

bool IsSummaryKafkaError(int code) { return code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN; }

absl::Status CheckKafkaProperties(
    const std::vector<std::pair<std::string, std::string>>& properties) {
  return NewKafkaConf(properties, {}).status();
}

std::string LibrdkafkaVersion() { return rd_kafka_version_str(); }

bool IsKafkaProperty(absl::string_view key) {
  std::string name(key);
  size_t size = 0;
  KafkaConf conf(rd_kafka_conf_new());
  if (rd_kafka_conf_get(conf.get(), name.c_str(), nullptr, &size) != RD_KAFKA_CONF_UNKNOWN)
    return true;
  KafkaTopicConf topic(rd_kafka_topic_conf_new());
  return rd_kafka_topic_conf_get(topic.get(), name.c_str(), nullptr, &size) !=
         RD_KAFKA_CONF_UNKNOWN;
}

std::vector<std::pair<std::string, std::string>> MessageHeaders(
    const rd_kafka_message_t* m) {
  std::vector<std::pair<std::string, std::string>> out;
  rd_kafka_headers_t* headers = nullptr;
  // rd_kafka_message_headers() wants a non-const message: it parses them lazily.
  if (rd_kafka_message_headers(const_cast<rd_kafka_message_t*>(m), &headers) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return out;
  }
  const char* name;
  const void* value;
  size_t size;
  for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
                     RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    out.emplace_back(name, value == nullptr
                               ? std::string()
                               : std::string(static_cast<const char*>(value), size));
  }
  return out;
}

absl::Status KafkaErrorStatus(int code, absl::string_view what) {
  auto err = static_cast<rd_kafka_resp_err_t>(code);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  std::string message =
      absl::StrCat(what, ": ", rd_kafka_err2name(err), " (", rd_kafka_err2str(err), ")");
  switch (err) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_INVALID_MSG:
    case RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR_INVALID_REQUIRED_ACKS:
      return absl::InvalidArgumentError(message);
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return absl::PermissionDeniedError(message);
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return absl::NotFoundError(message);
    case RD_KAFKA_RESP_ERR__FATAL:
      return absl::AbortedError(message);
    default:
      return absl::UnavailableError(message);
  }
}

absl::Status DeliveryReportStatus(int code, int64_t offset, int msg_status,
                                  absl::string_view topic, int32_t partition) {
  // The common case first, without building a message: once per acknowledged row.
  if (code == RD_KAFKA_RESP_ERR_NO_ERROR && offset >= 0 &&
      msg_status == RD_KAFKA_MSG_STATUS_PERSISTED) {
    return absl::OkStatus();
  }
  std::string where = absl::StrCat("delivery to ", topic, " [", partition, "]");
  absl::Status status = KafkaErrorStatus(code, where);
  if (!status.ok()) return status;
  return absl::UnavailableError(absl::StrCat(
      where, " reported success without proof of storage (offset ", offset,
      msg_status == RD_KAFKA_MSG_STATUS_PERSISTED ? ", persisted" : ", not persisted",
      "): acknowledged implicitly by librdkafka, so the broker may not have stored it"));
}

void LogLibrdkafka(Logger& log, int level, const char* facility, const char* line) {
  log.Log(
      FromSyslog(level), line,
      {{"component", std::string("librdkafka")}, {"facility", std::string(facility)}});
}

}  // namespace common

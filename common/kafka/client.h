// librdkafka helpers that both sides' shells share (the publisher's producers, the
// consumer kit's consumer and dead-letter producer): a client configuration, a
// message's headers, what a delivery report proves, and librdkafka's log lines and
// error codes in our terms. Handles and the making of a client: handles.h.
#ifndef COMMON_KAFKA_CLIENT_H_
#define COMMON_KAFKA_CLIENT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/log.h"

typedef struct rd_kafka_message_s rd_kafka_message_t;

namespace common {

// Whether librdkafka takes every one of `properties` (NewKafkaConf's refusal if
// not), without making a client: configuration is judged before anything is
// logged of it.
[[nodiscard]] absl::Status CheckKafkaProperties(
    const std::vector<std::pair<std::string, std::string>>& properties);

// The linked librdkafka's version ("2.8.0").
std::string LibrdkafkaVersion();

// Whether librdkafka knows `key` as a client or topic property.
bool IsKafkaProperty(absl::string_view key);

// A message's headers, in order (a null value as "").
std::vector<std::pair<std::string, std::string>> MessageHeaders(
    const rd_kafka_message_t* m);

// librdkafka's own log levels (syslog) as ours. Its errors (a broker refusing
// connections, ...) are retried inside librdkafka: warnings here. What the
// publisher decides is logged as error.
LogLevel FromSyslog(int level);

// Whether a log line (its log_cb's level and facility) reports requests to a
// broker that timed out: the REQTMOUT warning "Timed out 1 in-flight, ...". From
// 2.12 (#5126) librdkafka drops such a connection as a "planned" failure that
// reaches no error callback, so this line is then the only sign of a silent path.
bool IsRequestTimeoutLog(int level, absl::string_view facility);

// Whether an error callback's code only sums up others (_ALL_BROKERS_DOWN), which
// must not hide their cause (KafkaErrorCause).
bool IsSummaryKafkaError(int rd_kafka_resp_err);

// One librdkafka log line (its log_cb's arguments) on `log`, marked as librdkafka's.
void LogLibrdkafka(Logger& log, int level, const char* facility, const char* line);

// Maps a librdkafka error code to the Status classes of Delivery.
absl::Status KafkaErrorStatus(int rd_kafka_resp_err, absl::string_view what);

// What one delivery report proves. A report is proof of storage only when it has
// no error, an offset (>= 0) and the status RD_KAFKA_MSG_STATUS_PERSISTED.
// librdkafka also reports success for messages it acknowledged implicitly: when
// a later Produce request of the partition succeeds past an earlier one that
// failed, rd_kafka_dr_implicit_ack() reports the earlier messages delivered with
// offset -1001 (RD_KAFKA_OFFSET_INVALID), though no broker said it stored them
// (docs/implicit-ack.md). Such a report, and one that is only "possibly
// persisted", is kUnavailable: maybe stored, so the caller must not count it.
absl::Status DeliveryReportStatus(int rd_kafka_resp_err, int64_t offset,
                                  int rd_kafka_msg_status, absl::string_view topic,
                                  int32_t partition);

}  // namespace common

#endif  // COMMON_KAFKA_CLIENT_H_

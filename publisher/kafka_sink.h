// KafkaSink: the librdkafka shell. An idempotent producer (enable.idempotence,
// acks=all) that never drops a message on a timeout while the broker is merely
// unreachable (message.timeout.ms=0: retry forever), with delivery reports and
// librdkafka's own logs served on the caller's thread by Poll().
#ifndef PUBLISHER_KAFKA_SINK_H_
#define PUBLISHER_KAFKA_SINK_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "publisher/config.h"
#include "publisher/log.h"
#include "publisher/metrics.h"
#include "publisher/sink.h"
#include "publisher/supervisor.h"
#include "publisher/topic_handles.h"

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_message_s rd_kafka_message_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;

namespace publisher {

// The librdkafka properties the publisher sets, before the user's -X overrides.
std::vector<std::pair<std::string, std::string>> DefaultProducerProperties(
    const Config& config);

// How long librdkafka waits for one request before it fails it and drops the
// connection: socket.timeout.ms as the producer will have it (ours, or the user's
// -X), 30 s unless a readable -X says otherwise.
absl::Duration RequestTimeout(const Config& config);

// A client configuration: `properties`, then `overrides` (the user's -X) on top.
// kInvalidArgument naming a property librdkafka refuses. The caller owns the conf.
absl::StatusOr<rd_kafka_conf_t*> NewKafkaConf(
    std::vector<std::pair<std::string, std::string>> properties,
    const std::vector<std::pair<std::string, std::string>>& overrides);

// A message's headers, in order (a null value as "").
std::vector<std::pair<std::string, std::string>> MessageHeaders(
    const rd_kafka_message_t* m);

// librdkafka's own log levels (syslog) as ours. Its errors (a broker refusing
// connections, ...) are retried inside librdkafka: warnings here. What the
// publisher decides is logged as error.
LogLevel FromSyslog(int level);

// One librdkafka log line (its log_cb's arguments) on `log`, marked as librdkafka's.
void LogLibrdkafka(Logger& log, int level, const char* facility, const char* line);

// Both producers' error callback: logs the error and, when `metrics` is set, hands
// it to /healthz (Metrics::ReportKafkaError).
void ReportLibrdkafkaError(rd_kafka_t* rk, int rd_kafka_resp_err, const char* reason,
                           Logger& log, Metrics* metrics);

// Queues `record` on `rk` (its topic's handle from `topics`) with `opaque` for its
// delivery report. OK, or kResourceExhausted when the local queue is full, or
// KafkaErrorStatus's classes.
absl::Status ProduceRecord(rd_kafka_t* rk, TopicHandles& topics,
                           const OutboxRecord& record, void* opaque);

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

class KafkaSink : public Sink {
 public:
  // Creates the producer. kInvalidArgument for a bad -X property. `logger` must
  // outlive the sink.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<KafkaSink>> Create(
      const Config& config, Logger& logger);
  ~KafkaSink() override;

  // Asks the cluster for metadata: kUnavailable when no broker answers by `timeout`.
  [[nodiscard]] absl::Status CheckReachable(absl::Duration timeout);

  // The brokers the cluster reports and, with `all_topics`, every topic it has (a
  // request for all topics never creates one). kUnavailable when no broker answers
  // by `timeout`.
  struct ClusterMetadata {
    int brokers = 0;
    std::vector<std::string> topics;
  };
  [[nodiscard]] absl::StatusOr<ClusterMetadata> ReadMetadata(absl::Duration timeout,
                                                             bool all_topics);

  absl::Status Produce(const OutboxRecord& record, const MessageToken& token,
                       bool dead_letter) override;
  void Poll(absl::Duration timeout,
            const std::function<void(Delivery)>& on_delivery) override;
  size_t outstanding() const override;

  // Where librdkafka's errors go besides the log (/healthz); may be null. Set it
  // before the first Poll; it must outlive the sink.
  void set_metrics(Metrics* metrics) { metrics_ = metrics; }

 private:
  KafkaSink(Logger& logger) : logger_(logger) {}
  static void OnDeliveryReport(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque);
  static void OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf);
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque);

  Logger& logger_;
  Metrics* metrics_ = nullptr;
  rd_kafka_t* rk_ = nullptr;
  TopicHandles topics_;
  const std::function<void(Delivery)>* on_delivery_ = nullptr;  // During Poll only.
};

// Creates KafkaSinks; at start-up it also requires a broker to answer, so a wrong
// --brokers is reported before anything else happens.
class KafkaSinkFactory : public SinkFactory {
 public:
  // `config`, `log` and `metrics` (may be null) must outlive the factory.
  KafkaSinkFactory(const Config& config, Logger& log, Metrics* metrics = nullptr)
      : config_(config), log_(log), metrics_(metrics) {}
  absl::StatusOr<std::unique_ptr<Sink>> Create(bool first) override;

 private:
  const Config& config_;
  Logger& log_;
  Metrics* metrics_;
};

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_SINK_H_

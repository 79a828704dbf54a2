// KafkaSink: the librdkafka shell. An idempotent producer (enable.idempotence,
// acks=all) that never drops a message on a timeout while the broker is merely
// unreachable (message.timeout.ms=0: retry forever), with delivery reports and
// librdkafka's own logs served on the caller's thread by Poll().
#ifndef PUBLISHER_KAFKA_KAFKA_SINK_H_
#define PUBLISHER_KAFKA_KAFKA_SINK_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/client.h"
#include "common/kafka/handles.h"
#include "common/kafka_error_cause.h"
#include "common/log.h"
#include "publisher/delivery/sink.h"
#include "publisher/kafka/kafka_options.h"
#include "publisher/kafka/topic_handles.h"
#include "publisher/operations/metrics.h"

namespace publisher {

// The librdkafka properties the publisher sets, before the user's -X overrides.
std::vector<std::pair<std::string, std::string>> DefaultProducerProperties(
    const KafkaOptions& options);

// How long librdkafka waits for one request before it fails it and drops the
// connection: socket.timeout.ms as the producer will have it (ours, or the user's
// -X), 30 s unless a readable -X says otherwise.
absl::Duration RequestTimeout(const KafkaOptions& options);

// Both producers' error callback: logs the error and, when `metrics` is set, hands
// it to /healthz (Metrics::ReportKafkaError).
void ReportLibrdkafkaError(rd_kafka_t* rk, int rd_kafka_resp_err, const char* reason,
                           common::Logger& log, Metrics* metrics);

// Both producers' log callback: logs the line. A line that reports timed-out
// requests (common::IsRequestTimeoutLog) is also handed to /healthz, as
// "_TIMED_OUT: <line>", since librdkafka may report it nowhere else; returns that
// cause, or nullopt for any other line.
std::optional<std::string> ReportLibrdkafkaLog(int level, const char* facility,
                                               const char* line, common::Logger& log,
                                               Metrics* metrics);

// Queues `record` on `rk` (its topic's handle from `topics`) with `opaque` for its
// delivery report. OK, or kResourceExhausted when the local queue is full, or
// KafkaErrorStatus's classes.
absl::Status ProduceRecord(rd_kafka_t* rk, TopicHandles& topics,
                           const OutboxRecord& record, void* opaque);

class KafkaSink : public Sink {
 public:
  // Creates the producer. kInvalidArgument for a bad -X property. `logger` must
  // outlive the sink.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<KafkaSink>> Create(
      const KafkaOptions& options, common::Logger& logger);
  ~KafkaSink() override;

  // Asks the cluster for metadata: kUnavailable when no broker answers by `timeout`.
  [[nodiscard]] absl::Status CheckReachable(absl::Duration timeout);

  // The brokers the cluster reports and, with `all_topics`, every topic it has (a
  // request for all topics never creates one). kUnavailable when no broker answers
  // by `timeout`, with the client's latest error (a refused SASL login, say). Call
  // it before producing: it serves the error callbacks.
  struct ClusterMetadata {
    int brokers = 0;
    std::vector<std::string> topics;
  };
  [[nodiscard]] absl::StatusOr<ClusterMetadata> ReadMetadata(absl::Duration timeout,
                                                             bool all_topics);

  absl::Status Produce(const OutboxRecord& record, const MessageToken& token,
                       RecordKind kind) override;
  void Poll(absl::Duration timeout,
            const std::function<void(Delivery)>& on_delivery) override;
  size_t outstanding() const override;

  // Where librdkafka's errors go besides the log (/healthz); may be null. Set it
  // before the first Poll; it must outlive the sink.
  void set_metrics(Metrics* metrics) { metrics_ = metrics; }

 private:
  KafkaSink(common::Logger& logger) : logger_(logger) {}
  static void OnDeliveryReport(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque);
  static void OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf);
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque);

  common::Logger& logger_;
  Metrics* metrics_ = nullptr;
  // The latest error librdkafka reported, for start-up's refusal; on Poll's thread.
  common::KafkaErrorCause last_error_;
  common::KafkaClient rk_;
  TopicHandles topics_;  // Released before rk_ (declared after it).
  const std::function<void(Delivery)>* on_delivery_ = nullptr;  // During Poll only.
};

// Creates KafkaSinks; at start-up it also requires a broker to answer, so a wrong
// --brokers is reported before anything else happens.
class KafkaSinkFactory : public SinkFactory {
 public:
  // `log` and `metrics` (may be null) must outlive the factory.
  KafkaSinkFactory(KafkaOptions options, common::Logger& log, Metrics* metrics = nullptr)
      : options_(std::move(options)), log_(log), metrics_(metrics) {}
  absl::StatusOr<std::unique_ptr<Sink>> Create(bool first) override;
  // A plain producer of its own asks for metadata (it joins no transaction).
  absl::Status ProbeBrokers() override;
  void ReleaseProbe() override { probe_.reset(); }

 private:
  KafkaOptions options_;
  common::Logger& log_;
  Metrics* metrics_;
  std::unique_ptr<KafkaSink> probe_;
};

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_KAFKA_SINK_H_

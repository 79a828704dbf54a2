// ReadKafkaFindings: the librdkafka reads behind --check.
#include "publisher/kafka/preflight_reads.h"

#include <memory>
#include <utility>

#include "common/log.h"
#include "publisher/kafka/kafka_sink.h"

namespace publisher {
namespace {

constexpr absl::Duration kKafkaTimeout = absl::Seconds(10);

}  // namespace

KafkaFindings ReadKafkaFindings(const KafkaOptions& options) {
  KafkaFindings kafka;
  // Only errors: librdkafka's retries of an unreachable broker are not checks.
  common::Logger quiet(common::LogFormat::kText, common::LogLevel::kError);
  absl::StatusOr<std::unique_ptr<KafkaSink>> sink = KafkaSink::Create(options, quiet);
  if (!sink.ok()) {
    kafka.reachable = sink.status();
    return kafka;
  }
  absl::StatusOr<KafkaSink::ClusterMetadata> md =
      (*sink)->ReadMetadata(kKafkaTimeout, /*all_topics=*/true);
  kafka.reachable = md.status();
  if (md.ok()) {
    kafka.brokers = md->brokers;
    kafka.topics = std::move(md->topics);
  }
  return kafka;
}

}  // namespace publisher

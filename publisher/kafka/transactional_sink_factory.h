// TransactionalSinkFactory: creates the exactly-once sink (--delivery=exactly-once).
// Each creation (at start-up and at every rewind) initializes a transactional
// producer, which on a real broker fences older instances of the transactional
// id and aborts what they left open, then reads the latest committed checkpoint
// back from --checkpoint-topic (creating the topic when missing and --create
// allows): the relay skips every PostgreSQL transaction it covers.
#ifndef PUBLISHER_KAFKA_TRANSACTIONAL_SINK_FACTORY_H_
#define PUBLISHER_KAFKA_TRANSACTIONAL_SINK_FACTORY_H_

#include <memory>

#include "common/log.h"
#include "publisher/delivery/sink.h"
#include "publisher/kafka/kafka_options.h"
#include "publisher/kafka/kafka_sink.h"
#include "publisher/operations/metrics.h"

namespace publisher {

class TransactionalSinkFactory : public SinkFactory {
 public:
  // `log` must outlive the factory. `metrics` (may be null) counts Kafka
  // transactions; it must outlive the factory.
  TransactionalSinkFactory(ExactlyOnceOptions options, common::Logger& log,
                           Metrics* metrics = nullptr)
      : options_(std::move(options)),
        log_(log),
        metrics_(metrics),
        plain_(options_.kafka, log, metrics) {}
  // kUnavailable while the brokers do not answer (the supervisor retries a rewind's);
  // kFailedPrecondition when fenced or the checkpoint topic is missing and may not be
  // created; kDataLoss when the latest checkpoint cannot be read.
  absl::StatusOr<std::unique_ptr<Sink>> Create(bool first) override;
  // Through a plain producer: a transactional one would fence the active instance.
  absl::Status ProbeBrokers() override { return plain_.ProbeBrokers(); }
  void ReleaseProbe() override { plain_.ReleaseProbe(); }

 private:
  ExactlyOnceOptions options_;
  common::Logger& log_;
  Metrics* metrics_;
  KafkaSinkFactory plain_;  // Start-up's broker check and the standby's probe.
};

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_TRANSACTIONAL_SINK_FACTORY_H_

// TransactionalSinkFactory: creates the exactly-once sink (--delivery=exactly-once).
// Each creation (at start-up and at every rewind) initializes a transactional
// producer, which on a real broker fences older instances of the transactional
// id and aborts what they left open, then reads the latest committed checkpoint
// back from --checkpoint-topic (creating the topic when missing and --create
// allows): the relay skips every PostgreSQL transaction it covers.
#ifndef PUBLISHER_TRANSACTIONAL_SINK_FACTORY_H_
#define PUBLISHER_TRANSACTIONAL_SINK_FACTORY_H_

#include <memory>

#include "publisher/config.h"
#include "publisher/log.h"
#include "publisher/metrics.h"
#include "publisher/supervisor.h"

namespace publisher {

class TransactionalSinkFactory : public SinkFactory {
 public:
  // `config` and `log` must outlive the factory.
  // `metrics` (may be null) counts Kafka transactions; it must outlive the factory.
  TransactionalSinkFactory(const Config& config, Logger& log, Metrics* metrics = nullptr)
      : config_(config), log_(log), metrics_(metrics) {}
  // kUnavailable while the brokers do not answer (the supervisor retries a rewind's);
  // kFailedPrecondition when fenced or the checkpoint topic is missing and may not be
  // created; kDataLoss when the latest checkpoint cannot be read.
  absl::StatusOr<std::unique_ptr<Sink>> Create(bool first) override;

 private:
  const Config& config_;
  Logger& log_;
  Metrics* metrics_;
};

}  // namespace publisher

#endif  // PUBLISHER_TRANSACTIONAL_SINK_FACTORY_H_

// ConsumerMetrics: the consumer kit's numbers in Prometheus text exposition format
// (0.0.4), and its health, for a metrics server's thread. The consumer's thread
// publishes a copy of its counters after every step (OutboxConsumer::set_metrics);
// a scrape reads the copy. Names start with outbox_consumer_; counters end in
// _total, as the publisher's.
#ifndef CONSUMER_CONSUMER_METRICS_H_
#define CONSUMER_CONSUMER_METRICS_H_

#include <cstdint>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "consumer/outbox_consumer.h"

namespace consumer {

class ConsumerMetrics {
 public:
  // A step longer than this (a handler or the database that does not answer)
  // makes /healthz answer 503.
  static constexpr absl::Duration kStuckAfter = absl::Seconds(30);

  // The counters after a step that ended at `at`, with `held` records waiting for
  // a retry.
  void Publish(const ConsumerStats& stats, size_t held, absl::Time at);

  std::string RenderPrometheus(absl::Time now) const;
  // "" while the loop steps (the first step counts), else why not.
  std::string UnhealthyReason(absl::Time now) const;

 private:
  mutable std::mutex mu_;
  ConsumerStats stats_;
  size_t held_ = 0;
  absl::Time last_step_ = absl::InfinitePast();
};

}  // namespace consumer

#endif  // CONSUMER_CONSUMER_METRICS_H_

// RelayMonitor: what the relay and the supervisor tell whoever watches them (the
// program's Metrics, publisher/operations/metrics.h). Called on the relay's thread;
// an implementation takes its own lock.
#ifndef PUBLISHER_RELAY_RELAY_MONITOR_H_
#define PUBLISHER_RELAY_RELAY_MONITOR_H_

#include <string>

#include "absl/time/time.h"
#include "publisher/relay/relay_stats.h"

namespace publisher {

class RelayMonitor {
 public:
  virtual ~RelayMonitor() = default;
  // The relay's figures, when a run starts and ends and every metrics_interval.
  virtual void PublishRelay(const RelaySnapshot& snapshot) = 0;
  // The supervisor opened a new replication session after a failed one.
  virtual void CountReconnect() = 0;
  // Why the publisher is not streaming ("" once it streams again).
  virtual void SetNotStreamingReason(std::string reason) = 0;
  // Standing by: another connection streams the slot. `problem` is what would keep
  // this instance from taking over now ("" = nothing: PostgreSQL and the brokers
  // answered), found at `at`. Until the next SetNotStreamingReason or stream.
  virtual void SetStandingBy(std::string problem, absl::Time at) = 0;
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_RELAY_MONITOR_H_

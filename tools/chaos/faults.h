// The faults of a chaos run: which kinds a schedule injects, and how each is made
// and undone. Kinds:
//   kill-9, sigterm           the publisher killed, then restarted
//   second-publisher          a second publisher on the slot, then the first killed:
//                             the standby takes over
//   terminate-walsender       pg_terminate_backend of the slot's walsender
//   pg-restart                PostgreSQL restarted (fast)
//   failover                  the primary killed, its standby promoted (servers.h)
//   standby-restart, standby-loss
//                             the publishing standby restarted, or lost with its slot
//   blackhole                 every publisher connection to PostgreSQL silent 6-9 s
//   pg-latency, pg-narrow, pg-reset, pg-cut, pg-outage
//                             the other path faults (network.h) between the
//                             publishers and PostgreSQL; an outage lasts 12-24 s
//   kafka-blackhole, kafka-latency, kafka-narrow, kafka-reset, kafka-cut,
//   kafka-outage              the path faults between the publishers and every
//                             broker (a broker started with proxied paths); an
//                             outage lasts 35-70 s
//   consumer-kill-9, consumer-sigterm
//                             one of the consumer kit's instances killed and
//                             restarted (consumers.h)
//   the broker's own kinds    brokers.h
#ifndef TOOLS_CHAOS_FAULTS_H_
#define TOOLS_CHAOS_FAULTS_H_

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/chaos/brokers.h"
#include "tools/chaos/consumers.h"
#include "tools/chaos/options.h"
#include "tools/chaos/publishers.h"
#include "tools/chaos/servers.h"

namespace chaos {

// The fault kinds of a schedule. Every kind is injected once first, then at random.
std::vector<std::string> FaultKinds(const Options& o, const ChaosBroker& broker);

class FaultInjector {
 public:
  using Wait = std::function<void(absl::Duration)>;

  FaultInjector(Servers& servers, Publishers& publishers, ChaosBroker& broker)
      : servers_(servers), publishers_(publishers), broker_(broker) {}
  // For the consumer kinds (the soak's).
  void set_consumers(ConsumerGroup* consumers) { consumers_ = consumers; }

  // What Inject did.
  struct Done {
    std::string kind;               // As done: a broker may make another kind.
    std::string detail;             // For the log ("" when the kind says it all).
    bool killed = false;            // It killed the shard's publisher.
    bool restart_consumer = false;  // The verifier's consumer should be restarted.
  };
  // Injects one fault of `kind`, hitting `shard`'s publisher where it hits one;
  // `wait` waits through a fault that lasts. Dies when a fault cannot be made.
  Done Inject(const std::string& kind, int shard, std::mt19937_64& rng, const Wait& wait);

 private:
  Servers& servers_;
  Publishers& publishers_;
  ChaosBroker& broker_;
  ConsumerGroup* consumers_ = nullptr;
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_FAULTS_H_

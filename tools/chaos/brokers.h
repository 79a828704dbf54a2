// The brokers a chaos run can use, and the broker faults each can inject:
//   mock   librdkafka's mock cluster (mock-kafka), 3 brokers: all down and up,
//          injected Produce errors, leader moves, response delays. Writes no
//          transaction markers and fences nobody.
//   kafka  a real Apache Kafka cluster (tools/harness/kafka_cluster.sh), 3 KRaft
//          nodes, replication factor 3, min.insync.replicas 2: kill -9 and restart
//          of a broker, a broker frozen (SIGSTOP) and thawed, a real leader move.
//          Its read_committed consumers see committed transactions only.
#ifndef TOOLS_CHAOS_BROKERS_H_
#define TOOLS_CHAOS_BROKERS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/harness/processes.h"

namespace chaos {

class ChaosBroker {
 public:
  using Wait = std::function<void(absl::Duration)>;  // Keeps the verifier reading.

  virtual ~ChaosBroker() = default;
  // What the harness's clients (the verifier, the sampler) bootstrap from.
  virtual const std::string& bootstrap() const = 0;
  // What the publishers bootstrap from: through the paths' fault-proxies when the
  // broker was started with them, else bootstrap().
  virtual const std::string& publisher_bootstrap() const { return bootstrap(); }
  // The fault-proxies between the publishers and each broker (network.h); none
  // unless started with them.
  virtual std::vector<harness::FaultProxy*> paths() const { return {}; }
  // The brokers' processes (their memory is watched); none for mock-kafka.
  virtual std::vector<pid_t> server_pids() const { return {}; }
  // Whether a read_committed consumer sees only committed Kafka transactions.
  virtual bool writes_markers() const = 0;
  // The broker fault kinds it injects.
  virtual std::vector<std::string> fault_kinds() const = 0;
  // What Inject did.
  struct Injection {
    std::string kind;               // The fault injected: the one asked for, or
                                    // another when that one could not be made.
    bool restart_consumer = false;  // The verifier's consumer should be restarted.
  };
  // Injects one fault of `kind` (one of fault_kinds()) and undoes it.
  virtual Injection Inject(const std::string& kind, std::mt19937_64& rng,
                           const Wait& wait) = 0;
};

// Starts a broker ("mock" or "kafka") with `topic` (`partitions` partitions) and,
// when given, `checkpoint_topic`. With `proxied_paths` (kafka only), each broker
// advertises a fault-proxy in front of it to the publishers. Dies on failure.
std::unique_ptr<ChaosBroker> StartBroker(const std::string& kind,
                                         const std::string& topic, int partitions,
                                         const std::string& checkpoint_topic,
                                         bool proxied_paths = false);

}  // namespace chaos

#endif  // TOOLS_CHAOS_BROKERS_H_

// A throwaway Apache Kafka cluster (KRaft) for integration tests, through
// tools/harness/kafka_cluster.sh: started on free ports, stopped and deleted by the
// destructor, and by the script's watchdog if the test process dies first. Its
// JVMs start slowly (15-25 s): a test binary shares one cluster among its tests,
// kept apart by distinct topics.
#ifndef TOOLS_HARNESS_KAFKA_CLUSTER_H_
#define TOOLS_HARNESS_KAFKA_CLUSTER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace harness {

class KafkaCluster {
 public:
  // `brokers` nodes, each broker and controller; 3 gives replication factor 3 and
  // min.insync.replicas=2 by default. `external`, when given, holds one
  // {listen port, advertised port} pair per broker: each gets a second listener
  // that advertises a proxy's port (kafka_cluster.sh --external).
  // `jvm`: kSmall for tests (small heaps, the serial collector); kAsShipped for
  // benchmarks (the heap and G1 settings of Kafka's own start scripts).
  enum class Jvm { kSmall, kAsShipped };
  // `sasl_plain` "USER:PASSWORD": every broker also takes SASL/PLAIN clients of
  // that one account, at sasl_bootstrap().
  static absl::StatusOr<std::unique_ptr<KafkaCluster>> Start(
      int brokers, const std::vector<std::pair<int, int>>& external = {},
      Jvm jvm = Jvm::kSmall, const std::string& sasl_plain = "");
  ~KafkaCluster();

  const std::string& bootstrap() const { return bootstrap_; }
  // Through the advertised ports of `external` ("" without): a client that
  // bootstraps here reaches every broker through the proxies.
  const std::string& external_bootstrap() const { return external_bootstrap_; }
  // The SASL_PLAINTEXT listeners ("" without sasl_plain).
  const std::string& sasl_bootstrap() const { return sasl_bootstrap_; }
  const std::string& dir() const { return dir_; }
  int brokers() const { return brokers_; }

  // Creates a topic through the Admin API. `assignment`, when given, names the
  // brokers of each partition (the first is its preferred leader) instead of
  // `replication`; its size is the number of partitions.
  absl::Status CreateTopic(const std::string& name, int partitions, int replication,
                           const std::map<std::string, std::string>& configs = {},
                           const std::vector<std::vector<int>>& assignment = {});

  // Fault hooks, broker ids 1..brokers().
  absl::Status Kill(int broker);     // kill -9
  absl::Status Restart(int broker);  // after Kill; returns once it serves metadata
  absl::Status Freeze(int broker);   // SIGSTOP
  absl::Status Thaw(int broker);     // SIGCONT
  // Every broker running again (thawed, killed ones restarted): after a test.
  absl::Status Heal();
  // Makes `broker` the partition's leader, as a leader election does.
  absl::Status MoveLeader(const std::string& topic, int partition, int broker);

  // The partition's leader as the cluster reports it (-1: none).
  absl::StatusOr<int> Leader(const std::string& topic, int partition,
                             absl::Duration timeout = absl::Seconds(10));

 private:
  KafkaCluster(std::string dir, std::string bootstrap, int brokers)
      : dir_(std::move(dir)), bootstrap_(std::move(bootstrap)), brokers_(brokers) {}
  absl::Status Script(const std::string& args);

  std::string dir_;
  std::string bootstrap_;
  std::string external_bootstrap_;
  std::string sasl_bootstrap_;
  int brokers_;
};

}  // namespace harness

#endif  // TOOLS_HARNESS_KAFKA_CLUSTER_H_

// ChaosBroker over mock-kafka and over a real Apache Kafka cluster.
#include "tools/chaos/brokers.h"

#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "tools/harness/fatal.h"
#include "tools/harness/kafka_cluster.h"
#include "tools/harness/processes.h"

namespace chaos {
namespace {

using harness::Die;
using harness::Must;

constexpr int kBrokers = 3;

absl::Duration RandomMs(std::mt19937_64& rng, int lo, int hi) {
  return absl::Milliseconds(std::uniform_int_distribution<int>(lo, hi)(rng));
}

class MockBroker : public ChaosBroker {
 public:
  MockBroker(const std::string& topic, int partitions,
             const std::string& checkpoint_topic)
      : mock_(Must(harness::MockKafka::Start(kBrokers), "start mock-kafka")),
        topic_(topic),
        partitions_(partitions) {
    if (mock_->Command(absl::StrCat("topic ", topic, " ", partitions, " ", kBrokers)) !=
        "ok")
      Die("create topic");
    // mock-kafka never answers CreateTopics: the checkpoint topic is made here.
    if (!checkpoint_topic.empty() &&
        mock_->Command(absl::StrCat("topic ", checkpoint_topic, " 1 ", kBrokers)) != "ok")
      Die("create the checkpoint topic");
  }
  const std::string& bootstrap() const override { return mock_->bootstrap(); }
  bool writes_markers() const override { return false; }
  std::vector<std::string> fault_kinds() const override {
    return {"broker-down", "broker-errors", "leader-move", "broker-delay"};
  }
  Injection Inject(const std::string& kind, std::mt19937_64& rng,
                   const Wait& wait) override {
    if (kind == "broker-down") {
      mock_->Command("down all");
      absl::SleepFor(RandomMs(rng, 500, 3000));  // No consumer restarts meanwhile.
      mock_->Command("up all");
      return {kind, true};
    }
    if (kind == "broker-errors") {
      mock_->Command(
          "errors Produce NOT_LEADER_FOR_PARTITION REQUEST_TIMED_OUT "
          "NOT_ENOUGH_REPLICAS LEADER_NOT_AVAILABLE NOT_ENOUGH_REPLICAS_AFTER_APPEND "
          "NOT_LEADER_FOR_PARTITION NOT_LEADER_FOR_PARTITION REQUEST_TIMED_OUT");
    } else if (kind == "leader-move") {
      // A leader election: a third of the partitions move to another broker.
      for (int p = 0; p < partitions_; ++p) {
        if (std::uniform_int_distribution<int>(0, 2)(rng) != 0) continue;
        int broker = std::uniform_int_distribution<int>(1, kBrokers)(rng);
        mock_->Command(absl::StrCat("leader ", topic_, " ", p, " ", broker));
      }
    } else if (kind == "broker-delay") {
      mock_->Command("rtt all 700");
      wait(absl::Seconds(2));
      mock_->Command("rtt all 0");
    }
    return {kind, false};
  }

 private:
  std::unique_ptr<harness::MockKafka> mock_;
  std::string topic_;
  int partitions_;
};

class RealBroker : public ChaosBroker {
 public:
  RealBroker(const std::string& topic, int partitions, bool proxied_paths)
      : cluster_(Must(harness::KafkaCluster::Start(kBrokers, Proxies(proxied_paths)),
                      "start Apache Kafka")),
        topic_(topic),
        partitions_(partitions) {
    if (!cluster_
             ->CreateTopic(topic, partitions, kBrokers, {{"min.insync.replicas", "2"}})
             .ok())
      Die("create topic");
    // The checkpoint topic is left to the publisher, which creates it compacted.
  }
  const std::string& bootstrap() const override { return cluster_->bootstrap(); }
  const std::string& publisher_bootstrap() const override {
    return proxies_.empty() ? cluster_->bootstrap() : cluster_->external_bootstrap();
  }
  std::vector<harness::FaultProxy*> paths() const override {
    std::vector<harness::FaultProxy*> out;
    for (const auto& p : proxies_) out.push_back(p.get());
    return out;
  }
  std::vector<pid_t> server_pids() const override {
    std::vector<pid_t> pids;
    for (int i = 1; i <= kBrokers; ++i) {
      std::ifstream in(absl::StrCat(cluster_->dir(), "/node", i, "/pid"));
      pid_t pid = 0;
      in >> pid;  // Empty while the broker is down: 0.
      pids.push_back(pid);
    }
    return pids;
  }
  bool writes_markers() const override { return true; }
  std::vector<std::string> fault_kinds() const override {
    return {"broker-kill", "broker-freeze", "leader-move"};
  }
  Injection Inject(const std::string& kind, std::mt19937_64& rng,
                   const Wait& wait) override {
    int broker = std::uniform_int_distribution<int>(1, kBrokers)(rng);
    if (kind == "leader-move") {
      int partition = std::uniform_int_distribution<int>(0, partitions_ - 1)(rng);
      // Kafka's reassignment tool (a JVM per call) can time out on a loaded 2-core
      // machine: try again once, then kill the broker instead (which moves its
      // partitions' leaders too) rather than end the run or count a fault that
      // never happened.
      absl::Status moved = cluster_->MoveLeader(topic_, partition, broker);
      if (!moved.ok()) moved = cluster_->MoveLeader(topic_, partition, broker);
      if (moved.ok()) return {kind, false};
      std::cout << "chaos:   leader move not done (" << moved.message()
                << "); broker-kill instead" << std::endl;
      return Inject("broker-kill", rng, wait);
    }
    if (kind == "broker-kill") {
      if (!cluster_->Kill(broker).ok()) Die("kill a broker");
      wait(RandomMs(rng, 1000, 4000));
      if (!cluster_->Restart(broker).ok()) Die("restart a broker");
    } else if (kind == "broker-freeze") {
      if (!cluster_->Freeze(broker).ok()) Die("freeze a broker");
      wait(RandomMs(rng, 2000, 6000));
      if (!cluster_->Thaw(broker).ok()) Die("thaw a broker");
    }
    return {kind, false};
  }

 private:
  // One fault-proxy per broker, each in front of a second listener that advertises
  // the proxy's port: {listen port, advertised port} pairs for KafkaCluster::Start.
  std::vector<std::pair<int, int>> Proxies(bool proxied_paths) {
    std::vector<std::pair<int, int>> external;
    while (proxied_paths && external.size() < kBrokers) {
      int listen = harness::FreeTcpPort();
      bool taken = false;
      for (const auto& [l, a] : external) taken |= l == listen;
      if (taken) continue;
      proxies_.push_back(Must(harness::FaultProxy::Start(absl::StrCat("127.0.0.1:", listen)),
                              "start a broker's fault-proxy"));
      external.emplace_back(listen, proxies_.back()->port());
    }
    return external;
  }

  std::vector<std::unique_ptr<harness::FaultProxy>> proxies_;  // Before cluster_.
  std::unique_ptr<harness::KafkaCluster> cluster_;
  std::string topic_;
  int partitions_;
};

}  // namespace

std::unique_ptr<ChaosBroker> StartBroker(const std::string& kind,
                                         const std::string& topic, int partitions,
                                         const std::string& checkpoint_topic,
                                         bool proxied_paths) {
  if (kind == "mock" && proxied_paths) Die("mock-kafka's brokers cannot be proxied");
  if (kind == "mock")
    return std::make_unique<MockBroker>(topic, partitions, checkpoint_topic);
  if (kind == "kafka") return std::make_unique<RealBroker>(topic, partitions, proxied_paths);
  Die("--broker takes mock or kafka");
  return nullptr;
}

}  // namespace chaos

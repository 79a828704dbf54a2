// The consumer kit in the soak: two instances of its example service
// (outbox-paid-orders) in one consumer group, reading the run's topic and
// applying each OrderPaid event to their own database, while a lane kills them
// (kill -9 or SIGTERM) and restarts them. Their database (paid_orders, on a
// server of their own, as a service's database is) is what is judged at the end:
// every committed event applied exactly once. Availability is watched from outside: the
// longest stretch with events waiting in Kafka and no instance applying any.
#ifndef TOOLS_CHAOS_CONSUMERS_H_
#define TOOLS_CHAOS_CONSUMERS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "tools/harness/processes.h"

namespace chaos {

class ConsumerGroup {
 public:
  static constexpr int kInstances = 2;

  // `pg`: a conninfo to the primaries (dbname is replaced); `brokers`: the
  // cluster, directly; `extra`: flags every instance gets (e.g. -X properties).
  ConsumerGroup(std::string pg, std::string brokers, std::string topic, std::string dir,
                std::vector<std::string> extra);
  ~ConsumerGroup();

  // Creates the database and starts both instances.
  void Start();
  // Kills one instance at random with `sig` and starts it again.
  std::string KillOne(int sig, std::mt19937_64& rng);
  void StopAll();

  // Watches availability every 500 ms: `available()` is how many events Kafka
  // holds for the group (the verifier's distinct count).
  void Watch(std::function<int64_t()> available);
  absl::Duration longest_stall();
  absl::Time longest_stall_start();

  // The effects: events applied, distinct ones, and orders whose payment count
  // differs from `expected` (order -> events).
  struct Effects {
    int64_t applied = 0, distinct = 0, orders_wrong = 0;
  };
  Effects Read(const std::map<std::string, int64_t>& expected);
  int64_t Applied();

  int restarts() const { return restarts_; }

 private:
  std::unique_ptr<harness::Process> Launch(int i);

  const std::string pg_, brokers_, topic_, dir_;
  const std::vector<std::string> extra_;
  std::mutex mu_;
  std::vector<std::unique_ptr<harness::Process>> instances_;
  int launched_ = 0;
  std::atomic<int> restarts_{0};

  std::atomic<bool> stop_watch_{false};
  std::thread watch_;
  absl::Duration longest_stall_;
  absl::Time longest_stall_start_;
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_CONSUMERS_H_

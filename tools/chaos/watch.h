// What the soak watches while it runs, every second, from its own thread: what an
// operator sees (each primary publisher's /healthz, and /metrics' counters and lag
// of the watched one) and what a leak hunt needs (the watched publisher's RSS,
// threads and open file descriptors; the memory of its walsender and of every
// broker). The watched publisher is the one shard whose publisher no fault kills.
#ifndef TOOLS_CHAOS_WATCH_H_
#define TOOLS_CHAOS_WATCH_H_

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "tools/chaos/publishers.h"
#include "tools/harness/pg_cluster.h"

namespace chaos {

// A process's size at one moment, from /proc.
struct ResourceSample {
  absl::Time at;
  int64_t rss_kb = 0;
  int threads = 0;
  int fds = 0;
};
// None when the process is gone.
std::optional<ResourceSample> SampleProcess(pid_t pid);

struct HealthSample {
  absl::Time at;
  int shard = 0;
  int code = 0;  // -1: nothing answered.
  std::string reason;
};

// The watched publisher's counters (/metrics), as last read.
struct Counters {
  double published = 0, acknowledged = 0, rewinds = 0, reconnects = 0;
  double committed_transactions = 0, aborted_transactions = 0;
};

class Watch {
 public:
  // `slot_conninfo`: the server of the slots, where the walsender's pid is read;
  // `broker_pids`: the brokers' processes, read anew at every sample (a killed
  // broker restarts under a new pid).
  Watch(Publishers& publishers, int watched_shard, std::string slot_conninfo,
        std::function<std::vector<pid_t>()> broker_pids);
  ~Watch();

  void Start();
  // Stops sampling; the counters are read once more first.
  void Stop();

  std::vector<ResourceSample> publisher();
  std::vector<ResourceSample> walsender();
  std::map<int, std::vector<ResourceSample>> brokers();  // By broker (1-based).
  std::vector<HealthSample> health();
  Counters counters();
  double max_lag_seconds();
  // The watched shard's primary processes seen (1 when it lived through the run).
  std::set<pid_t> watched_pids();
  std::string watched_log();

 private:
  void Run();
  void SampleOnce();
  void ReadMetrics(int port);

  Publishers& publishers_;
  const int watched_shard_;
  const std::string slot_conninfo_;
  const std::function<std::vector<pid_t>()> broker_pids_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::unique_ptr<harness::PgSession> sql_;  // The sampling thread's.

  std::mutex mu_;
  std::vector<ResourceSample> publisher_, walsender_;
  std::map<int, std::vector<ResourceSample>> brokers_;
  std::vector<HealthSample> health_;
  Counters counters_;
  double max_lag_ = 0;
  std::set<pid_t> watched_pids_;
  std::string watched_log_;
  int watched_port_ = 0;
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_WATCH_H_

// The soak schedule's faults: every kind at once, from concurrent lanes, for as
// long as the run lasts. Each lane injects its own kinds one after the other (each
// once first, in order, so that a short run has every kind; then at random by
// weight), with a random pause between them; the lanes overlap, so a broker dies
// while the publisher is killed and the path to PostgreSQL is slow:
//   publisher  kill -9, SIGTERM, the standby pair's takeover (shard 1's only: the
//              other shard's publisher lives through the run, and its size over
//              time is the leak check)
//   postgres   walsender terminated, PostgreSQL restarted, primary failover, and
//              the path faults between the publishers and PostgreSQL
//   kafka      broker kill -9, SIGSTOP, leader moves, and the path faults between
//              the publishers and every broker
//   consumers  one of the consumer kit's two instances killed (-9 or SIGTERM) and
//              restarted (consumers.h)
// An outage (a path dead for longer than the publisher's 30 s stall bound, new
// connections too) is a path fault that comes seldom: /healthz must say so.
#ifndef TOOLS_CHAOS_SOAK_H_
#define TOOLS_CHAOS_SOAK_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/chaos/consumers.h"
#include "tools/chaos/faults.h"
#include "tools/chaos/watch.h"
#include "tools/chaos/writer.h"

namespace chaos {

// One injected fault, as the soak recorded it.
struct FaultRecord {
  std::string lane, kind, detail;
  absl::Time start, end;
};

// The faults injected so far, from every lane.
class FaultLog {
 public:
  void Add(FaultRecord r);
  std::vector<FaultRecord> all();
  int64_t size();

 private:
  std::mutex mu_;
  std::vector<FaultRecord> faults_;
};

struct SoakLane {
  std::string name;
  std::vector<std::pair<std::string, double>> kinds;  // Kind, weight.
  absl::Duration min_pause, max_pause;
};

// The lanes of the soak, for a broker with proxied paths.
std::vector<SoakLane> SoakLanes();

// Runs `lanes` concurrently, each on its own thread and random sequence (from
// `seed`), until `done()` says so (checked between faults), logging every fault.
// Publisher faults hit shard 0. Returns once every lane has stopped.
void RunLanes(const std::vector<SoakLane>& lanes, uint64_t seed, FaultInjector& injector,
              FaultLog& log, const std::function<bool()>& done);

// Runs the soak's faults until `faults` were injected, every kind at least once,
// and the writer committed `rows`; meanwhile calls `tick` (the verifier's reading) every
// 50 ms and makes sure every shard has a publisher. Then stops the writer.
void RunSoak(int64_t faults, int64_t rows, uint64_t seed, Publishers& publishers,
             FaultInjector& injector, FaultLog& log, Writer& writer,
             std::atomic<bool>& stop_writer, const std::function<void()>& tick);

// What the soak's report is made of, beside the verdicts every schedule has.
struct SoakFacts {
  std::vector<FaultRecord> faults;
  std::vector<absl::Time> committed;  // By event number (Writer::CommitTimes).
  std::vector<absl::Time> delivered;  // By event number: first delivery.
  std::vector<int> shard;             // By event number: its key's shard (0-based).
  int watched_shard = 1;
  int64_t watched_records = 0;   // Records of the watched shard's events consumed.
  int64_t watched_distinct = 0;  // Its distinct events.
  int64_t watched_rewinds_logged = 0;
  int64_t watched_failed_tx_records = 0;  // FailedTransactionRecords of its log.
  bool exactly_once = false;
  // The consumer group's: its effects, the events it should have applied, and
  // its longest stall.
  ConsumerGroup::Effects effects;
  int64_t expected_events = 0;
  absl::Duration longest_stall;
  absl::Time stall_start;
  int consumer_restarts = 0;
};

// Prints the soak's report (recovery per fault kind, resources, health around
// outages, /metrics against the verifier) and returns whether its verdicts hold.
bool ReportSoak(const SoakFacts& facts, Watch& watch);

}  // namespace chaos

#endif  // TOOLS_CHAOS_SOAK_H_

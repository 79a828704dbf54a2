// The soak's own verdicts, as pure functions over what it recorded (soak.h's
// fault log, the writer's commit times, the verifier's first deliveries, the
// watch's samples), so that each has a unit test (soak_audit_test.cc).
//   - recovery: per fault kind, from a fault's start to the first delivery of a
//     row committed after it (p50, p99, max);
//   - resources: after a warm-up, the watched process's RSS, threads and open
//     descriptors in the first and the last window of the run, and whether the
//     last stays within the tolerance of the first;
//   - health: during each outage /healthz answered 503, and 200 again after it.
#ifndef TOOLS_CHAOS_SOAK_AUDIT_H_
#define TOOLS_CHAOS_SOAK_AUDIT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace chaos {

struct FaultSpan {
  std::string kind;
  absl::Time start, end;
  int shard = -1;    // The shard whose publisher it hit; -1: every shard's path.
  std::string lane;  // Faults of one lane never overlap; of two, they may.
};

struct Spread {
  int64_t n = 0;
  absl::Duration p50, p99, max;
};
Spread SpreadOf(std::vector<absl::Duration> v);

// Per fault kind, the spread of its recovery times: from the fault's end (when it
// was undone; its start for one that does not last) to the earliest delivery of an
// event committed at or after its start, 0 when one arrived before its end (the
// flow never stopped). Only events of the fault's shard count when it hit one.
// `alone`: the recoveries during which no fault of another lane was under way
// (from this one's start to the delivery), which are the fault's own; the others
// include what the overlapping faults cost.
// `committed`, `delivered` and `shard` are by event number (commit order):
// absl::InfinitePast() for a commit not seen, absl::InfiniteFuture() for an event
// never delivered. A fault after which nothing committed is not counted.
struct Recovery {
  Spread all, alone;
};
std::map<std::string, Recovery> RecoveryByKind(const std::vector<FaultSpan>& faults,
                                               const std::vector<absl::Time>& committed,
                                               const std::vector<absl::Time>& delivered,
                                               const std::vector<int>& shard);

struct Usage {
  int64_t samples = 0;
  int64_t rss_kb_median = 0;
  int threads_max = 0;
  int fds_max = 0;
};
struct ResourceTrend {
  Usage first, last;
  bool flat = false;
  std::string why;  // What is not flat ("" when flat).
};
// One sample: the time, RSS (KiB), threads, open descriptors.
struct UsageSample {
  absl::Time at;
  int64_t rss_kb = 0;
  int threads = 0;
  int fds = 0;
};
// Compares the first and the last `window` of the samples taken after `warm_up`
// (the windows shrink to a third each of a shorter run). Flat: the last window's
// median RSS within 10% (and at least 8 MiB) of the first's, and no more threads
// or descriptors at their most than the first window had plus `slack`.
ResourceTrend TrendOf(const std::vector<UsageSample>& samples, absl::Duration warm_up,
                      absl::Duration window, int slack = 4);

struct OutageHealth {
  FaultSpan outage;
  bool unhealthy_during = false;  // A 503 between its start and 15 s after its end.
  absl::Duration healthy_after;   // From its end to the next 200.
  bool healthy_again = false;     // A 200 came after it.
};
struct HealthPoint {
  absl::Time at;
  int code = 0;
};
std::vector<OutageHealth> HealthAround(const std::vector<FaultSpan>& outages,
                                       const std::vector<HealthPoint>& health);

}  // namespace chaos

#endif  // TOOLS_CHAOS_SOAK_AUDIT_H_

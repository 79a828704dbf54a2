// Network faults on a path of a chaos run: the fault-proxies between the
// publishers and PostgreSQL, or between the publishers and each broker. Every
// proxy of the path gets the fault at once, and it is undone before returning.
//   blackhole  open connections silent, nothing closed, 6-9 s (then thawed: the
//              held bytes flow on)
//   latency    20-300 ms each way, jitter up to half of it, for 3-8 s
//   narrow     a cap of 20-500 kB/s each way per connection, for 3-8 s
//   reset      every open connection reset (RST) in the middle of its next
//              request or response
//   cut        every open connection closed after 0-64 kB more
//   outage     every connection silent, and new ones too, for as long as the
//              caller says (longer than the publisher's stall bounds)
#ifndef TOOLS_CHAOS_NETWORK_H_
#define TOOLS_CHAOS_NETWORK_H_

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/harness/processes.h"

namespace chaos {

inline const std::vector<std::string> kPathFaults = {"blackhole", "latency", "narrow",
                                                     "reset",     "cut",     "outage"};

// Makes the path fault `what` (one of kPathFaults) on every proxy of `path`, waits
// through it with `wait`, and undoes it. Returns what it did, for the log. Dies
// when a proxy does not answer.
// An outage lasts `outage` to twice as long.
std::string InjectPathFault(const std::string& what,
                            const std::vector<harness::FaultProxy*>& path,
                            std::mt19937_64& rng,
                            const std::function<void(absl::Duration)>& wait,
                            absl::Duration outage = absl::Seconds(20));

}  // namespace chaos

#endif  // TOOLS_CHAOS_NETWORK_H_

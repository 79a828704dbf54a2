#include "tools/chaos/network.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/harness/fatal.h"

namespace chaos {
namespace {

int Uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// `command` on every proxy of the path.
void Each(const std::vector<harness::FaultProxy*>& path, const std::string& what,
          const std::function<absl::Status(harness::FaultProxy&)>& command) {
  for (harness::FaultProxy* p : path) {
    absl::Status s = command(*p);
    if (!s.ok()) harness::Die(absl::StrCat("path fault ", what, ": ", s.ToString()));
  }
}

}  // namespace

std::string InjectPathFault(const std::string& what,
                            const std::vector<harness::FaultProxy*>& path,
                            std::mt19937_64& rng,
                            const std::function<void(absl::Duration)>& wait,
                            absl::Duration outage) {
  if (what == "outage") {
    int64_t ms = absl::ToInt64Milliseconds(outage);
    absl::Duration d =
        absl::Milliseconds(std::uniform_int_distribution<int64_t>(ms, 2 * ms)(rng));
    Each(path, what, [](harness::FaultProxy& p) { return p.Blackhole(); });
    wait(d);
    Each(path, what, [](harness::FaultProxy& p) { return p.Thaw(); });
    return absl::StrCat("dead, new connections too, for ", absl::FormatDuration(d));
  }
  if (what == "blackhole") {
    absl::Duration d = absl::Milliseconds(Uniform(rng, 6000, 9000));
    Each(path, what, [](harness::FaultProxy& p) { return p.Freeze(); });
    wait(d);
    Each(path, what, [](harness::FaultProxy& p) { return p.Thaw(); });
    return absl::StrCat("silent for ", absl::FormatDuration(d));
  }
  if (what == "latency" || what == "narrow") {
    absl::Duration d = absl::Milliseconds(Uniform(rng, 3000, 8000));
    std::string shape;
    if (what == "latency") {
      int ms = Uniform(rng, 20, 300), jitter = Uniform(rng, 0, ms / 2);
      Each(path, what, [&](harness::FaultProxy& p) {
        return p.Latency(absl::Milliseconds(ms), absl::Milliseconds(jitter));
      });
      shape = absl::StrCat(ms, " +- ", jitter, " ms each way");
    } else {
      int64_t rate = int64_t{1000} * Uniform(rng, 20, 500);
      Each(path, what, [&](harness::FaultProxy& p) { return p.Bandwidth(rate); });
      shape = absl::StrCat(rate / 1000, " kB/s each way");
    }
    wait(d);
    Each(path, what, [](harness::FaultProxy& p) { return p.Clear(); });
    return absl::StrCat(shape, " for ", absl::FormatDuration(d));
  }
  if (what == "reset") {
    Each(path, what, [](harness::FaultProxy& p) { return p.Reset(); });
    return "every open connection reset mid-message";
  }
  if (what == "cut") {
    int64_t bytes = Uniform(rng, 0, 64 * 1024);
    Each(path, what, [&](harness::FaultProxy& p) { return p.CutAfter(bytes); });
    return absl::StrCat("every open connection cut after ", bytes, " more bytes");
  }
  harness::Die(absl::StrCat("unknown path fault ", what));
  return "";
}

}  // namespace chaos

#include "tools/chaos/soak_audit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace chaos {

Spread SpreadOf(std::vector<absl::Duration> v) {
  Spread s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
  };
  s.p50 = at(0.5);
  s.p99 = at(0.99);
  s.max = v.back();
  return s;
}

std::map<std::string, Recovery> RecoveryByKind(const std::vector<FaultSpan>& faults,
                                               const std::vector<absl::Time>& committed,
                                               const std::vector<absl::Time>& delivered,
                                               const std::vector<int>& shard) {
  // Events whose commit was seen, in commit order, and per shard (and for all,
  // under -1) the earliest delivery from each of them on.
  std::vector<std::pair<absl::Time, size_t>> seen;
  for (size_t i = 0; i < committed.size(); ++i)
    if (committed[i] != absl::InfinitePast()) seen.emplace_back(committed[i], i);
  std::stable_sort(seen.begin(), seen.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<int, std::vector<absl::Time>> earliest;  // Shard -> by position in seen.
  std::vector<int> shards = {-1};
  for (int s : shard)
    if (std::find(shards.begin(), shards.end(), s) == shards.end()) shards.push_back(s);
  for (int s : shards) {
    std::vector<absl::Time>& e = earliest[s];
    e.assign(seen.size() + 1, absl::InfiniteFuture());
    for (size_t k = seen.size(); k-- > 0;) {
      size_t i = seen[k].second;
      bool counts = s == -1 || (i < shard.size() && shard[i] == s);
      absl::Time d =
          counts && i < delivered.size() ? delivered[i] : absl::InfiniteFuture();
      e[k] = std::min(e[k + 1], d);
    }
  }
  std::map<std::string, std::vector<absl::Duration>> by_kind, alone;
  for (const FaultSpan& f : faults) {
    size_t k = static_cast<size_t>(
        std::lower_bound(seen.begin(), seen.end(), f.start,
                         [](const auto& a, absl::Time t) { return a.first < t; }) -
        seen.begin());
    if (k == seen.size()) continue;  // Nothing committed after it.
    auto it = earliest.find(f.shard);
    if (it == earliest.end()) it = earliest.find(-1);
    absl::Time first = it->second[k];
    if (first == absl::InfiniteFuture()) continue;
    absl::Duration took = std::max(absl::ZeroDuration(), first - f.end);
    by_kind[f.kind].push_back(took);
    absl::Time until = std::max(first, f.end);
    bool overlapped = false;
    for (const FaultSpan& o : faults)
      overlapped |= o.lane != f.lane && o.start <= until && o.end >= f.start;
    if (!overlapped) alone[f.kind].push_back(took);
  }
  std::map<std::string, Recovery> out;
  for (auto& [kind, v] : by_kind) {
    out[kind].all = SpreadOf(std::move(v));
    out[kind].alone = SpreadOf(std::move(alone[kind]));
  }
  return out;
}

namespace {

Usage UsageOf(const std::vector<UsageSample>& v) {
  Usage u;
  u.samples = static_cast<int64_t>(v.size());
  if (v.empty()) return u;
  std::vector<int64_t> rss;
  for (const UsageSample& s : v) {
    rss.push_back(s.rss_kb);
    u.threads_max = std::max(u.threads_max, s.threads);
    u.fds_max = std::max(u.fds_max, s.fds);
  }
  std::sort(rss.begin(), rss.end());
  u.rss_kb_median = rss[rss.size() / 2];
  return u;
}

}  // namespace

ResourceTrend TrendOf(const std::vector<UsageSample>& samples, absl::Duration warm_up,
                      absl::Duration window, int slack) {
  ResourceTrend t;
  if (samples.empty()) {
    t.why = "no samples";
    return t;
  }
  absl::Time from = samples.front().at + warm_up, to = samples.back().at;
  if (to <= from) {
    t.why = "no sample after the warm-up";
    return t;
  }
  window = std::min(window, (to - from) / 3);
  std::vector<UsageSample> first, last;
  for (const UsageSample& s : samples) {
    if (s.at >= from && s.at < from + window) first.push_back(s);
    if (s.at > to - window) last.push_back(s);
  }
  t.first = UsageOf(first);
  t.last = UsageOf(last);
  if (first.empty() || last.empty()) {
    t.why = "a window without samples";
    return t;
  }
  int64_t rss_tolerance = std::max<int64_t>(8 * 1024, t.first.rss_kb_median / 10);
  std::vector<std::string> why;
  if (t.last.rss_kb_median > t.first.rss_kb_median + rss_tolerance)
    why.push_back(absl::StrCat("RSS grew from ", t.first.rss_kb_median, " to ",
                               t.last.rss_kb_median, " KiB"));
  if (t.last.threads_max > t.first.threads_max + slack)
    why.push_back(absl::StrCat("threads grew from ", t.first.threads_max, " to ",
                               t.last.threads_max));
  if (t.last.fds_max > t.first.fds_max + slack)
    why.push_back(absl::StrCat("open descriptors grew from ", t.first.fds_max, " to ",
                               t.last.fds_max));
  for (const std::string& w : why) t.why += (t.why.empty() ? "" : "; ") + w;
  t.flat = why.empty();
  return t;
}

std::vector<OutageHealth> HealthAround(const std::vector<FaultSpan>& outages,
                                       const std::vector<HealthPoint>& health) {
  std::vector<OutageHealth> out;
  for (const FaultSpan& o : outages) {
    OutageHealth h;
    h.outage = o;
    for (const HealthPoint& p : health) {
      if (p.at >= o.start && p.at <= o.end + absl::Seconds(15) && p.code == 503)
        h.unhealthy_during = true;
      if (p.at > o.end && p.code == 200 && !h.healthy_again) {
        h.healthy_again = true;
        h.healthy_after = p.at - o.end;
      }
    }
    out.push_back(h);
  }
  return out;
}

}  // namespace chaos

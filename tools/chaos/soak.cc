#include "tools/chaos/soak.h"

#include <iostream>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tools/chaos/soak_audit.h"

namespace chaos {

void FaultLog::Add(FaultRecord r) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_.push_back(std::move(r));
}

std::vector<FaultRecord> FaultLog::all() {
  std::lock_guard<std::mutex> lock(mu_);
  return faults_;
}

int64_t FaultLog::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(faults_.size());
}

std::vector<SoakLane> SoakLanes() {
  return {
      {"publisher",
       {{"kill-9", 1}, {"sigterm", 1}, {"second-publisher", 1}},
       absl::Seconds(3),
       absl::Seconds(8)},
      {"postgres",
       {{"terminate-walsender", 1},
        {"pg-restart", 1},
        {"failover", 1},
        {"blackhole", 1},
        {"pg-latency", 1},
        {"pg-narrow", 1},
        {"pg-reset", 1},
        {"pg-cut", 1},
        {"pg-outage", 0.15}},
       absl::Seconds(2),
       absl::Seconds(6)},
      {"kafka",
       {{"broker-kill", 1},
        {"broker-freeze", 1},
        {"leader-move", 1},
        {"kafka-blackhole", 1},
        {"kafka-latency", 1},
        {"kafka-narrow", 1},
        {"kafka-reset", 1},
        {"kafka-cut", 1},
        {"kafka-outage", 0.1}},
       absl::Seconds(2),
       absl::Seconds(6)},
      {"consumers",
       {{"consumer-kill-9", 1}, {"consumer-sigterm", 1}},
       absl::Seconds(4),
       absl::Seconds(12)},
  };
}

namespace {

void RunLane(const SoakLane& lane, uint64_t seed, FaultInjector& injector, FaultLog& log,
             const std::function<bool()>& done) {
  std::mt19937_64 rng(seed);
  std::vector<double> weights;
  for (const auto& [kind, w] : lane.kinds) weights.push_back(w);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  auto sleep = [](absl::Duration d) { absl::SleepFor(d); };
  for (size_t n = 0; !done(); ++n) {
    int64_t lo = absl::ToInt64Milliseconds(lane.min_pause);
    int64_t hi = absl::ToInt64Milliseconds(lane.max_pause);
    absl::SleepFor(
        absl::Milliseconds(std::uniform_int_distribution<int64_t>(lo, hi)(rng)));
    if (done()) break;
    const std::string& kind =
        n < lane.kinds.size() ? lane.kinds[n].first : lane.kinds[pick(rng)].first;
    FaultRecord r{lane.name, kind, "", absl::Now(), absl::Now()};
    FaultInjector::Done d = injector.Inject(kind, 0, rng, sleep);
    r.kind = d.kind;
    r.detail = d.detail;
    r.end = absl::Now();
    std::cout << "chaos: " << absl::FormatTime("%H:%M:%S", r.start, absl::UTCTimeZone())
              << " [" << lane.name << "] " << r.kind
              << (r.detail.empty() ? "" : absl::StrCat(": ", r.detail)) << " ("
              << absl::FormatDuration(r.end - r.start) << ")" << std::endl;
    log.Add(std::move(r));
  }
}

}  // namespace

void RunLanes(const std::vector<SoakLane>& lanes, uint64_t seed, FaultInjector& injector,
              FaultLog& log, const std::function<bool()>& done) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < lanes.size(); ++i) {
    threads.emplace_back(RunLane, std::cref(lanes[i]), seed * 1000003 + i,
                         std::ref(injector), std::ref(log), std::cref(done));
  }
  for (std::thread& t : threads) t.join();
}

namespace {

// The lanes' kinds not among `faults` yet (a broker's leader move that became
// a kill does not count as a leader move).
std::vector<std::string> MissingKinds(const std::vector<FaultRecord>& faults) {
  std::set<std::string> seen;
  for (const FaultRecord& f : faults) seen.insert(f.kind);
  std::vector<std::string> missing;
  for (const SoakLane& lane : SoakLanes())
    for (const auto& [kind, weight] : lane.kinds)
      if (!seen.count(kind)) missing.push_back(kind);
  return missing;
}

}  // namespace

void RunSoak(int64_t faults, int64_t rows, uint64_t seed, Publishers& publishers,
             FaultInjector& injector, FaultLog& log, Writer& writer,
             std::atomic<bool>& stop_writer, const std::function<void()>& tick) {
  std::atomic<bool> stop_lanes{false}, lanes_done{false};
  std::thread lanes([&] {
    RunLanes(SoakLanes(), seed, injector, log, [&] { return stop_lanes.load(); });
    lanes_done = true;
  });
  absl::Time next_check = absl::Now(), next_say = absl::Now() + absl::Seconds(30);
  while (!lanes_done) {
    tick();
    absl::Time now = absl::Now();
    if (now >= next_check) {
      publishers.EnsurePrimary();
      next_check = now + absl::Seconds(1);
    }
    if (now >= next_say) {
      std::cout << "chaos: soak: " << writer.written() << " rows written, " << log.size()
                << " faults" << std::endl;
      next_say = now + absl::Seconds(30);
    }
    // (Three times the faults asked for without every kind: ReportSoak fails it.)
    if (log.size() >= faults && writer.written() >= rows &&
        (MissingKinds(log.all()).empty() || log.size() >= 3 * faults))
      stop_lanes = true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  lanes.join();
  stop_writer = true;
}

namespace {

void Say(const std::string& line) { std::cout << "chaos: " << line << std::endl; }

std::vector<UsageSample> UsageSamples(const std::vector<ResourceSample>& v) {
  std::vector<UsageSample> out;
  for (const ResourceSample& s : v) out.push_back({s.at, s.rss_kb, s.threads, s.fds});
  return out;
}

std::string Describe(const Usage& u) {
  return absl::StrCat(u.rss_kb_median / 1024, " MiB RSS (median), ", u.threads_max,
                      " threads, ", u.fds_max, " fds (most), ", u.samples, " samples");
}

// The first and the last window of a process's samples taken while the faults
// went on (not the drain after them); whether it stayed flat. Judged only when
// they span `judge_from` at least: a short run's thirds tell load, not a trend.
bool ReportTrend(const std::string& what, std::vector<ResourceSample> samples,
                 absl::Time faults_end, absl::Duration judge_from, bool judged) {
  std::erase_if(samples, [&](const ResourceSample& s) { return s.at > faults_end; });
  judged &= !samples.empty() && samples.back().at - samples.front().at >= judge_from;
  absl::Duration window = absl::Hours(1);
  ResourceTrend t = TrendOf(UsageSamples(samples), absl::Minutes(2), window);
  Say(absl::StrCat("  ", what, ": first ", Describe(t.first), "; last ", Describe(t.last),
                   judged   ? (t.flat ? " (flat)" : absl::StrCat(" NOT FLAT: ", t.why))
                   : t.flat ? " (not judged: a short run)"
                            : absl::StrCat(" (not judged: a short run; ", t.why, ")")));
  return !judged || t.flat;
}

}  // namespace

bool ReportSoak(const SoakFacts& facts, Watch& watch) {
  bool ok = true;
  std::vector<std::string> missing = MissingKinds(facts.faults);
  Say(absl::StrCat("fault kinds never injected: ",
                   missing.empty() ? "none" : absl::StrJoin(missing, ", ")));
  ok &= missing.empty();
  std::vector<FaultSpan> spans, outages;
  for (const FaultRecord& f : facts.faults) {
    bool publisher_fault = f.lane == "publisher";
    spans.push_back({f.kind, f.start, f.end, publisher_fault ? 0 : -1, f.lane});
    if (absl::EndsWith(f.kind, "-outage")) outages.push_back(spans.back());
  }
  Say("recovery per fault kind, from the fault undone to the first new event "
      "delivered: all of them; and those during which no other lane's fault was "
      "under way:");
  auto spread = [](const Spread& s) {
    if (s.n == 0) return std::string("none");
    return absl::StrCat("n=", s.n, " p50 ", absl::FormatDuration(s.p50), ", p99 ",
                        absl::FormatDuration(s.p99), ", max ",
                        absl::FormatDuration(s.max));
  };
  for (const auto& [kind, r] :
       RecoveryByKind(spans, facts.committed, facts.delivered, facts.shard)) {
    Say(absl::StrCat("  ", kind, ": ", spread(r.all), "; alone: ", spread(r.alone)));
  }

  // Resources: the whole run's first and last hour (thirds of a shorter run).
  std::set<pid_t> pids = watch.watched_pids();
  Say(
      absl::StrCat("resources while the faults went on, the first hour and the last "
                   "(thirds of a shorter run), after 2 minutes' warm-up (the publisher "
                   "of shard ",
                   facts.watched_shard + 1, ", which no fault kills; ", pids.size(),
                   " process(es)):"));
  if (pids.size() != 1) {
    Say("  the watched publisher did not live through the run");
    ok = false;
  }
  absl::Time faults_end = absl::InfinitePast();
  for (const FaultRecord& f : facts.faults) faults_end = std::max(faults_end, f.end);
  const absl::Duration judge_from = absl::Minutes(30);
  ok &= ReportTrend("publisher", watch.publisher(), faults_end, judge_from, true);
  ReportTrend("its walsender", watch.walsender(), faults_end, judge_from, false);
  for (const auto& [broker, samples] : watch.brokers())
    ReportTrend(absl::StrCat("broker ", broker), samples, faults_end, judge_from, false);

  // /healthz around each outage, from the watched shard's publisher.
  std::vector<HealthPoint> health;
  for (const HealthSample& h : watch.health())
    if (h.shard == facts.watched_shard) health.push_back({h.at, h.code});
  for (const OutageHealth& h : HealthAround(outages, health)) {
    bool good = h.unhealthy_during && h.healthy_again;
    ok &= good;
    Say(absl::StrCat(
        "/healthz around ", h.outage.kind, " at ",
        absl::FormatTime("%H:%M:%S", h.outage.start, absl::UTCTimeZone()), " (",
        absl::FormatDuration(h.outage.end - h.outage.start),
        "): ", h.unhealthy_during ? "503 during it" : "NO 503 during it", ", ",
        h.healthy_again ? absl::StrCat("200 again ",
                                       absl::FormatDuration(h.healthy_after), " after it")
                        : "NEVER 200 again"));
  }
  if (outages.empty()) {
    Say("/healthz: no outage was injected");
    ok = false;
  }
  Say(absl::StrCat("worst lag /metrics showed (outbox_publisher_lag_seconds): ",
                   watch.max_lag_seconds(), " s"));

  // /metrics against the verifier, for the watched publisher (one process).
  Counters c = watch.counters();
  Say(absl::StrCat(
      "/metrics of the watched publisher: published ", c.published, ", acknowledged ",
      c.acknowledged, ", rewinds ", c.rewinds, ", reconnects ", c.reconnects,
      facts.exactly_once
          ? absl::StrCat(", Kafka transactions committed ", c.committed_transactions,
                         ", aborted ", c.aborted_transactions)
          : ""));
  Say(absl::StrCat("  the verifier read ", facts.watched_records, " records of its ",
                   facts.watched_distinct, " events; its log names ",
                   facts.watched_rewinds_logged, " rewinds",
                   facts.exactly_once
                       ? absl::StrCat(" and ", facts.watched_failed_tx_records,
                                      " records in Kafka transactions it saw fail")
                       : ""));
  // Acknowledged records are stored, so a consumer reads them all. At least once,
  // every event was acknowledged once at least (the slot confirmed the end only
  // after that). Exactly once, the acknowledged are the records of the Kafka
  // transactions the publisher saw commit; a commit that failed on its side may
  // have committed on the broker (the checkpoint then skips those rows), so a
  // consumer may read up to that many more.
  double acked = c.acknowledged, records = static_cast<double>(facts.watched_records);
  bool agree =
      c.published >= acked && acked <= records &&
      c.rewinds == static_cast<double>(facts.watched_rewinds_logged) &&
      (facts.exactly_once
           ? records <= acked + static_cast<double>(facts.watched_failed_tx_records)
           : acked >= static_cast<double>(facts.watched_distinct));
  Say(absl::StrCat("/metrics agree with the verifier: ", agree ? "yes" : "NO"));
  ok &= agree;

  // The consumer kit: every committed event applied once, each order's payments.
  const ConsumerGroup::Effects& e = facts.effects;
  bool once = e.applied == facts.expected_events && e.distinct == facts.expected_events &&
              e.orders_wrong == 0;
  Say(absl::StrCat("consumer group (", ConsumerGroup::kInstances, " instances, ",
                   facts.consumer_restarts, " restarts): applied ", e.applied, " (",
                   e.distinct, " distinct) of ", facts.expected_events,
                   " committed events, orders with a wrong payment count ",
                   e.orders_wrong, once ? ": each once" : ": NOT each once"));
  ok &= once;
  // An operator pages on a group that applies nothing for minutes: at the kit's
  // defaults it must come back within a minute, whatever was killed.
  bool available = facts.longest_stall < absl::Minutes(1);
  ok &= available;
  Say(absl::StrCat(
      available ? "" : "NOT WITHIN A MINUTE: ",
      "consumer group availability: the longest stretch with events waiting and no "
      "instance applying any: ",
      absl::FormatDuration(facts.longest_stall),
      facts.longest_stall > absl::ZeroDuration()
          ? absl::StrCat(
                " (from ",
                absl::FormatTime("%H:%M:%S", facts.stall_start, absl::UTCTimeZone()), ")")
          : ""));
  return ok;
}

}  // namespace chaos

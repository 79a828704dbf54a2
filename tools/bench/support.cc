#include "tools/bench/support.h"

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tools/harness/fatal.h"
#include "tools/harness/tool_flags.h"

ABSL_FLAG(bool, quick, false, "small backlogs: a smoke test (figures mean little)");
ABSL_FLAG(bool, steady_only, false, "only the steady state");
ABSL_FLAG(std::string, only, "",
          "only the workloads whose name contains this (\"steady\" for the steady "
          "state; \"=NAME\" for the backlog workload named exactly NAME)");
ABSL_FLAG(std::string, markdown, "", "also write the tables to this file");

namespace bench {

using harness::Die;
using harness::Must;

ProcessUsage Usage(pid_t pid) {
  ProcessUsage u;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  std::getline(stat, line);
  // Fields after the command name, which is in parentheses and may hold spaces.
  std::vector<std::string> f = absl::StrSplit(line.substr(line.rfind(')') + 2), ' ');
  if (f.size() > 13) {
    double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    u.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;  // utime, stime.
  }
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) u.peak_rss_kib = std::stoll(line.substr(6));
  }
  return u;
}

std::string OutboxSchema() {
  return "CREATE TABLE outbox (id text PRIMARY KEY, aggregate_type text NOT NULL, "
         "aggregate_id text NOT NULL, event_type text NOT NULL, payload jsonb NOT "
         "NULL, headers jsonb, created_at timestamptz NOT NULL DEFAULT now()); "
         "CREATE PUBLICATION outbox_publisher FOR TABLE outbox WITH (publish = "
         "'insert')";
}

void WriteBacklog(harness::PgSession& sql, int64_t rows, int64_t rows_per_tx,
                  int payload_bytes, int64_t first) {
  // The payload is a JSON object of about payload_bytes.
  int pad = std::max(1, payload_bytes - 12);
  // Separate statements: a DO block may COMMIT only outside an implicit
  // multi-statement transaction.
  Must(sql.Exec("SET synchronous_commit = off"), "set");
  Must(sql.Exec(absl::StrFormat(R"sql(
    DO $$ DECLARE n bigint := %d; BEGIN
      WHILE n < %d LOOP
        INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
        SELECT 'r' || g, 'bench', 'a' || (g %% 1000), 'E',
               jsonb_build_object('pad', repeat('x', %d))
        FROM generate_series(n, n + %d - 1) g;
        n := n + %d;
        COMMIT;
      END LOOP;
    END $$)sql",
                                first, first + rows, pad, rows_per_tx, rows_per_tx)),
       "write backlog");
}

void PrepareInsert(harness::PgSession& sql) {
  Must(sql.Exec("PREPARE ins(text) AS INSERT INTO outbox (id, aggregate_type, "
                "aggregate_id, event_type, payload) VALUES ($1, 'bench', $1, 'E', "
                "'{\"pad\": \"" +
                std::string(80, 'x') + "\"}')"),
       "prepare");
}

namespace {

// Single-row transactions ins('<prefix>0'), ins('<prefix>1'), ... at `rate` per
// second for `duration`; returns when each one's commit returned.
std::vector<absl::Time> InsertPaced(harness::PgSession& sql, int rate,
                                    absl::Duration duration, const std::string& prefix) {
  absl::Duration gap = absl::Seconds(1) / rate;
  std::vector<absl::Time> committed;
  absl::Time start = absl::Now();
  for (int64_t i = 0; absl::Now() - start < duration; ++i) {
    absl::Time due = start + gap * i;
    if (absl::Time now = absl::Now(); due > now) absl::SleepFor(due - now);
    Must(sql.Exec(absl::StrCat("EXECUTE ins('", prefix, i, "')")), "insert");
    committed.push_back(absl::Now());
  }
  return committed;
}

}  // namespace

void WarmUpSteady(harness::PgSession& sql, int rate, absl::Duration warm_up) {
  InsertPaced(sql, rate, warm_up, "w");
}

std::string LatencyFigures(const Latency& l) {
  return absl::StrFormat(
      "p50 %.1f ms, p99 %.1f ms, max %.1f ms", absl::ToDoubleMilliseconds(l.p50),
      absl::ToDoubleMilliseconds(l.p99), absl::ToDoubleMilliseconds(l.max));
}

Latency MeasureSteady(harness::PgSession& sql, harness::Consumer& consumer, int rate,
                      absl::Duration duration) {
  absl::Time start = absl::Now();
  std::vector<absl::Time> committed = InsertPaced(sql, rate, duration, "");
  absl::Duration took = absl::Now() - start;
  // Every measured row, by key: a count of records would include any warm-up
  // row, and end the wait one row early. Each check reads only the records that
  // arrived since the last.
  std::vector<absl::Duration> latencies;
  std::vector<bool> seen(committed.size());
  size_t read = 0;
  auto measure = [&] {
    std::vector<harness::ConsumedRecord> fresh = consumer.Records(read);
    read += fresh.size();
    for (const auto& rec : fresh) {
      size_t i = 0;
      if (!absl::SimpleAtoi(rec.key, &i) || i >= committed.size() || seen[i]) continue;
      seen[i] = true;
      latencies.push_back(rec.received - committed[i]);
    }
    return latencies.size() == committed.size();
  };
  // A contender slower than the rate catches up after the writer stops: its
  // latencies grow, and say so.
  harness::WaitFor(measure, absl::Minutes(5));
  if (latencies.size() != committed.size())
    Die(absl::StrCat("steady state: ", committed.size() - latencies.size(),
                     " rows never arrived"));
  return Quantiles(std::move(latencies), committed.size() / absl::ToDoubleSeconds(took));
}

Latency ProducingAloneLatency(const std::string& brokers, const std::string& topic,
                              harness::Consumer& consumer, int rate,
                              absl::Duration duration, absl::Duration warm_up) {
  std::cerr << "bench: producing alone: " << rate << " records/s for "
            << absl::FormatDuration(duration) << std::endl;
  int64_t skip = static_cast<int64_t>(rate * absl::ToDoubleSeconds(warm_up));
  int64_t messages = skip + static_cast<int64_t>(rate * absl::ToDoubleSeconds(duration));
  std::string log = absl::StrCat("/tmp/outbox-bench-", getpid(), "-alone.log");
  auto p = Must(
      harness::Process::Start({harness::BuildPath("bench-sink-floor"), brokers, topic,
                               absl::StrCat(messages), "250", absl::StrCat(rate)},
                              log),
      "bench-sink-floor");
  std::optional<int> code = p->Wait(warm_up + duration + absl::Minutes(2));
  std::string out = p->Log();
  std::remove(log.c_str());
  if (!code || *code != 0) Die("bench-sink-floor: " + out);
  // Keyed by number (bench-sink-floor's paced mode), each with its produce time.
  std::vector<absl::Duration> latencies;
  size_t read = 0;
  auto measure = [&] {
    std::vector<harness::ConsumedRecord> fresh = consumer.Records(read);
    read += fresh.size();
    for (const auto& rec : fresh) {
      int64_t key = 0, us = 0;
      if (!absl::SimpleAtoi(rec.key, &key) || key < skip) continue;
      for (const auto& [name, value] : rec.headers) {
        if (name == "produced_us" && absl::SimpleAtoi(value, &us))
          latencies.push_back(rec.received - absl::FromUnixMicros(us));
      }
    }
    return static_cast<int64_t>(latencies.size()) >= messages - skip;
  };
  if (!harness::WaitFor(measure, absl::Seconds(60)))
    Die("producing alone: records never arrived");
  return Quantiles(std::move(latencies), rate);
}

Latency Quantiles(std::vector<absl::Duration> latencies, double rate) {
  std::sort(latencies.begin(), latencies.end());
  Latency l;
  l.rows = static_cast<int64_t>(latencies.size());
  l.rate = rate;
  l.p50 = latencies[latencies.size() / 2];
  l.p99 = latencies[latencies.size() * 99 / 100];
  l.max = latencies.back();
  return l;
}

std::unique_ptr<harness::Process> StartBenchPublisher(
    const std::string& conninfo, const std::string& brokers, const std::string& topic,
    const std::vector<std::string>& extra, const std::vector<std::string>& flags,
    const std::string& log_path) {
  std::vector<std::string> argv = {harness::BuildPath("outbox-publisher"),
                                   "--pg",
                                   conninfo,
                                   "--brokers",
                                   brokers,
                                   "--log-level",
                                   "warn"};
  if (!topic.empty()) argv.insert(argv.end(), {"--topic", topic});
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), flags.begin(), flags.end());
  return Must(harness::Process::Start(argv, log_path), "start publisher");
}

void Emit(const std::string& report, const std::string& markdown) {
  std::cout << report;
  if (markdown.empty()) return;
  std::ofstream out(markdown);
  out << report;
  if (!out) Die("cannot write " + markdown);
}

namespace {

// The commit-to-acknowledgement buckets of a /metrics body: (upper bound in s,
// cumulative count), in the order given.
std::vector<std::pair<double, double>> AckBuckets(const std::string& metrics) {
  std::vector<std::pair<double, double>> buckets;
  for (absl::string_view line : absl::StrSplit(metrics, '\n')) {
    // outbox_publisher_commit_to_ack_seconds_bucket{slot="…",le="0.005"} 12
    if (!absl::StartsWith(line, "outbox_publisher_commit_to_ack_seconds_bucket{"))
      continue;
    size_t at = line.find("le=\"");
    if (at == absl::string_view::npos) continue;
    line.remove_prefix(at + 4);
    size_t quote = line.find('"');
    std::string le(line.substr(0, quote));
    double bound = le == "+Inf" ? 1e9 : std::stod(le);
    buckets.emplace_back(bound, std::stod(std::string(line.substr(line.rfind(' ') + 1))));
  }
  return buckets;
}

}  // namespace

std::string ScrapeMetrics(int port) {
  httplib::Client scrape("127.0.0.1", port);
  auto metrics = scrape.Get("/metrics");
  if (!metrics || metrics->status != 200) Die("no /metrics from the publisher");
  return metrics->body;
}

void WarmUpPublisher(harness::PgSession& sql, int metrics_port,
                     const harness::Process& publisher, absl::Duration timeout) {
  httplib::Client client("127.0.0.1", metrics_port);
  if (!harness::WaitFor(
          [&] {
            auto h = client.Get("/healthz");
            return h && h->status == 200;
          },
          timeout))
    Die("the publisher never started streaming: " + publisher.Log());
  PrepareInsert(sql);
  Must(sql.Exec("EXECUTE ins('4000000000')"), "warm-up insert");
  if (!harness::WaitFor(
          [&] {
            auto m = client.Get("/metrics");
            return m && m->status == 200 &&
                   m->body.find(
                       "\noutbox_publisher_acknowledged_total{slot=\""
                       "outbox_publisher\"} 1\n") != std::string::npos;
          },
          timeout))
    Die("steady state: the warm-up row was never acknowledged: " + publisher.Log());
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2]
                           : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double HistogramQuantileMs(const std::string& metrics, double q,
                           const std::string& since) {
  std::vector<std::pair<double, double>> buckets = AckBuckets(metrics);
  std::vector<std::pair<double, double>> before = AckBuckets(since);
  if (before.size() == buckets.size()) {
    for (size_t i = 0; i < buckets.size(); ++i) buckets[i].second -= before[i].second;
  }
  if (buckets.empty() || buckets.back().second == 0) return 0;
  double rank = q * buckets.back().second, lower = 0, below = 0;
  for (const auto& [bound, count] : buckets) {
    if (count >= rank) {
      if (bound >= 1e9) return lower * 1000;
      return (lower + (bound - lower) * (rank - below) / std::max(1.0, count - below)) *
             1000;
    }
    lower = bound;
    below = count;
  }
  return lower * 1000;
}

ProducingAloneFigures ProducingAlone(const std::string& brokers, const std::string& topic,
                                     int64_t messages, size_t value_bytes) {
  std::string log = absl::StrCat("/tmp/outbox-bench-", getpid(), "-sink.log");
  auto p = Must(
      harness::Process::Start({harness::BuildPath("bench-sink-floor"), brokers, topic,
                               absl::StrCat(messages), absl::StrCat(value_bytes)},
                              log),
      "bench-sink-floor");
  std::optional<int> code = p->Wait(absl::Minutes(10));
  std::string out = p->Log();
  std::remove(log.c_str());
  size_t cpu = out.find("cpu_us_per_msg="), rate = out.find("msgs_per_s=");
  if (!code || *code != 0 || cpu == std::string::npos || rate == std::string::npos)
    Die("bench-sink-floor: " + out);
  return {std::stod(out.substr(cpu + strlen("cpu_us_per_msg="))),
          std::stod(out.substr(rate + strlen("msgs_per_s=")))};
}

BenchArgs ParseBenchArgs(int argc, char** argv, absl::string_view program) {
  std::string usage =
      absl::StrCat(program,
                   " [--quick] [--steady-only] [--only WORKLOAD] [--markdown FILE] "
                   "[-- publisher flags ...]");
  harness::ToolArgs parsed = harness::ParseToolFlags(argc, argv, usage);
  if (!parsed.positional.empty()) Die(absl::StrCat("usage: ", usage));
  BenchArgs a;
  a.publisher_flags = std::move(parsed.passed_on);
  a.quick = absl::GetFlag(FLAGS_quick);
  a.steady_only = absl::GetFlag(FLAGS_steady_only);
  a.only = absl::GetFlag(FLAGS_only);
  a.markdown = absl::GetFlag(FLAGS_markdown);
  return a;
}

}  // namespace bench

// What the benchmark drivers share (outbox-bench on mock-kafka, outbox-versus on
// Apache Kafka beside Debezium): the outbox table, backlogs, the steady-state
// writer and its latency figures, and process CPU and memory readings.
#ifndef TOOLS_BENCH_SUPPORT_H_
#define TOOLS_BENCH_SUPPORT_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"

namespace bench {

struct ProcessUsage {
  double cpu_seconds = 0;
  int64_t peak_rss_kib = 0;
};

// user+sys of every thread of `pid`, and its VmHWM, while it still runs.
ProcessUsage Usage(pid_t pid);

// The outbox table (text ids) and the publication outbox_publisher for it.
std::string OutboxSchema();

// Commits rows [first, first + rows) in transactions of rows_per_tx, from one DO
// block, with synchronous_commit off. Row g: id 'r<g>', aggregate_type 'bench',
// aggregate_id 'a<g % 1000>', a JSON payload of about payload_bytes.
void WriteBacklog(harness::PgSession& sql, int64_t rows, int64_t rows_per_tx,
                  int payload_bytes, int64_t first = 0);

// Prepares ins(text): one row whose id and aggregate_id (the Kafka key) are $1.
void PrepareInsert(harness::PgSession& sql);

// Commit-to-consumer latency of a steady state.
struct Latency {
  double rate = 0;  // Achieved transactions per second.
  absl::Duration p50, p99, max;
  int64_t rows = 0;
  // The publisher's own commit-to-acknowledgement quantiles, estimated from its
  // /metrics histogram as Prometheus' histogram_quantile does: the part of the
  // latency that is ours and the broker's, without the consumer's fetching.
  double ack_p50_ms = 0, ack_p99_ms = 0;
};

// "p50 X ms, p99 Y ms, max Z ms", as the reports print a latency.
std::string LatencyFigures(const Latency& l);

// The steady state's traffic for `warm_up`, unmeasured: single-row transactions
// ins('w0'), ins('w1'), ... at `rate` per second on `sql` (PrepareInsert done). A
// JVM compiles its hot paths in its first seconds of load.
void WarmUpSteady(harness::PgSession& sql, int rate, absl::Duration warm_up);

// Commits single-row transactions ins('0'), ins('1'), ... at `rate` per second for
// `duration` on `sql` (PrepareInsert done), then waits until `consumer` has
// received every one (keyed by its number) and returns the latencies from each
// commit to its arrival. Dies when rows never arrive.
Latency MeasureSteady(harness::PgSession& sql, harness::Consumer& consumer, int rate,
                      absl::Duration duration);

// The steady state's floor on the broker side: bench-sink-floor producing `rate`
// records per second into `topic` on `brokers` with the publisher's producer
// settings, for `warm_up` unmeasured and then `duration`; `consumer` (on `topic`)
// times each from its produce to its arrival. What the steady state adds above it
// is the walsender's and the publisher's reading and mapping.
Latency ProducingAloneLatency(const std::string& brokers, const std::string& topic,
                              harness::Consumer& consumer, int rate,
                              absl::Duration duration,
                              absl::Duration warm_up = absl::ZeroDuration());

// p50, p99 and max of `latencies` (not empty), with `rate` as the achieved rate.
Latency Quantiles(std::vector<absl::Duration> latencies, double rate);

// outbox-publisher on `conninfo` and `brokers` with --topic `topic` (its default when
// empty), warnings only, then `extra` and the run's `flags`; its output goes to
// `log_path`.
std::unique_ptr<harness::Process> StartBenchPublisher(
    const std::string& conninfo, const std::string& brokers, const std::string& topic,
    const std::vector<std::string>& extra, const std::vector<std::string>& flags,
    const std::string& log_path);

// Prints `report` and, when `markdown` is not empty, writes it there too.
void Emit(const std::string& report, const std::string& markdown);

// The publisher's /metrics body from 127.0.0.1:`port`; dies without one.
std::string ScrapeMetrics(int port);

// Before a steady state is measured: waits until `publisher` (serving /metrics on
// `metrics_port`) streams, /healthz 200 (rows committed before its slot exists are
// never sent), prepares ins() on `sql`, and commits one warm-up row, out of the
// measured keys, until it is acknowledged: the first Kafka transaction or
// producer session pays for metadata and coordinator lookups. Dies otherwise,
// with the publisher's log.
void WarmUpPublisher(harness::PgSession& sql, int metrics_port,
                     const harness::Process& publisher, absl::Duration timeout);

// The median of `v` (the mean of the middle two for an even count).
double Median(std::vector<double> v);

// histogram_quantile over outbox_publisher_commit_to_ack_seconds in a /metrics
// body: linear interpolation inside the bucket that holds quantile q, in ms. With
// `since` (an earlier body of the same publisher), over what was observed after
// it only, as Prometheus' rate() would: without a warm-up's start-up and topic
// creation.
double HistogramQuantileMs(const std::string& metrics, double q,
                           const std::string& since = "");

// bench-sink-floor: the publisher's own KafkaSink, with its producer settings,
// producing `messages` records of `value_bytes` into `topic` as fast as it can,
// without reading or mapping anything. What producing alone costs (CPU per
// message, all threads) and how fast it goes: a floor under the publisher.
struct ProducingAloneFigures {
  double cpu_us_per_msg = 0;
  double msgs_per_s = 0;
};
ProducingAloneFigures ProducingAlone(const std::string& brokers, const std::string& topic,
                                     int64_t messages, size_t value_bytes);

// The benchmark drivers' flags (outbox-bench and outbox-versus), absl::flags:
//   [--quick] [--steady-only] [--only WORKLOAD] [--markdown FILE]
//   [-- publisher flags ...]
struct BenchArgs {
  bool quick = false;        // Small backlogs: a smoke test; figures mean little.
  bool steady_only = false;  // Only the steady state.
  std::string only;          // Only the workloads whose name contains it.
  std::string markdown;      // Where the tables also go.
  std::vector<std::string> publisher_flags;  // After "--": for every publisher.
};
BenchArgs ParseBenchArgs(int argc, char** argv, absl::string_view program);

}  // namespace bench

#endif  // TOOLS_BENCH_SUPPORT_H_

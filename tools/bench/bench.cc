// outbox-bench: scripts/bench.sh's driver. Every contender reads the same backlog in
// the same PostgreSQL cluster, from a slot of its own created before the backlog:
//   limit           bench-raw-reader (raw libpq, discards CopyData), blocking and
//                   napping when dry; the faster of the two is a round's limit;
//   pg_recvlogical  pgoutput, same publication, to /dev/null (reference);
//   publisher       outbox-publisher to mock-kafka, timed until its slot's
//                   confirmed_flush_lsn reaches the end of the backlog, right
//                   after the round's limit;
//   producing alone bench-sink-floor: the publisher's KafkaSink producing records
//                   of the same size, no reading or mapping (a CPU floor).
// The limit and the publisher run in 5 rounds (paired runs under the same load on
// a shared machine, where one run alone swings by a third): the medians count, the
// ratio is the median of the rounds' ratios with its lowest and highest, and peak
// RSS is the highest.
// For the publisher it also reads CPU time (user+sys of all threads, /proc) and
// peak RSS (VmHWM). Then a steady-state run: single-row transactions at a fixed
// rate, commit-to-consumer latency measured by a consumer on the same machine.
// Workloads and the steady state run in both delivery modes (exactly-once: Kafka
// transactions of --transaction-interval, default 100 ms). Last, the outbox table
// against transactional messages: WAL bytes per event, the writer's commits per
// second and the publisher's throughput, at 1 and 10 events per transaction.
//
//   outbox-bench [--quick] [--steady-only] [--only WORKLOAD] [--markdown FILE]
//                [-- publisher flags ...]
//
// --quick runs small backlogs (a smoke test, as ctest does); figures from it mean
// little. --only runs the workloads whose name contains WORKLOAD ("steady" for the
// steady state), for profiling one of them; "=NAME" runs only the backlog workload
// named exactly NAME ("=10 rows/tx, 100 B" without its exactly-once twin or the
// slow-broker one, whose names contain it).
#include <httplib.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cdc/catalog_facts.h"
#include "cdc/key_shard.h"
#include "cdc/lsn.h"
#include "tools/bench/standby.h"
#include "tools/bench/support.h"
#include "tools/harness/fatal.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"

namespace bench {
namespace {

using harness::BuildPath;
using harness::Consumer;
using harness::Die;
using harness::MockKafka;
using harness::Must;
using harness::PgCluster;
using harness::Process;
using harness::WaitFor;

constexpr char kTopic[] = "outbox.event.bench";
constexpr int kPartitions = 32;

struct Workload {
  std::string name;
  int64_t rows;
  int64_t rows_per_tx;  // rows_per_tx == rows: one transaction.
  int payload_bytes;
  std::vector<std::string> publisher_args = {};  // E.g. --delivery exactly-once.
  // mock-kafka delays every response by this much: a broker slower than the WAL,
  // so that the in-flight limits, not the broker, bound the publisher's memory.
  int broker_rtt_ms = 0;
};

const std::vector<std::string> kExactlyOnce = {"--delivery", "exactly-once"};

struct Result {
  Workload w;
  // Medians over `rounds` paired runs (Bench::RunWorkload); `ratio` is the median
  // of each round's publisher / limit, between ratio_low and ratio_high.
  int rounds = 0;
  double ratio = 0, ratio_low = 0, ratio_high = 0;
  double limit_rows_s = 0, recvlogical_rows_s = 0, publisher_rows_s = 0;
  double cpu_us_per_row = 0;
  // The limit reader's CPU per row (median): what merely receiving the
  // stream through libpq costs, a floor under the publisher's figure.
  double limit_cpu_us_per_row = 0;
  // What producing alone costs: bench-sink-floor (KafkaSink with the publisher's
  // settings, records of the same size, no reading or mapping).
  double sink_cpu_us_per_row = 0;
  int64_t peak_rss_kib = 0;
};

class Bench {
 public:
  // Shards (--shard I/N): 1, 2 and 4 publishers on one backlog, each from its own
  // slot and row-filtered publication, into a mock-kafka each; timed from their start
  // until every shard's slot is confirmed past the backlog's end. 1 is the
  // unsharded publisher. Each walsender's CPU is read from /proc before it exits:
  // every one decodes the whole WAL, whatever its filter keeps.
  struct ShardResult {
    int shards = 0;
    double rows_s = 0;  // Median over the rounds.
    double rows_s_low = 0, rows_s_high = 0;
    double walsender_cpu_s = 0;           // All walsenders, median.
    double walsender_cpu_s_max = 0;       // The busiest one, median.
    double publisher_cpu_us_per_row = 0;  // All publishers, median.
  };
  std::vector<ShardResult> Shards(int64_t rows, int rounds) {
    const std::vector<int> counts = {1, 2, 4};
    int slots = 0;
    for (int n : counts) slots += n;
    std::cerr << "bench: shards: writing the backlog" << std::endl;
    auto pg =
        Must(PgCluster::Start({"max_wal_size=4GB", "checkpoint_timeout=30min",
                               absl::StrCat("max_replication_slots=", slots * rounds + 2),
                               "max_wal_senders=12"},
                              RowFilterVersion()),
             "start PostgreSQL");
    auto sql = Must(pg->Connect(), "connect");
    Must(sql->Exec(OutboxSchema()), "schema");
    // Every shard's publication and slot before the backlog, as docs/operations.md
    // asks of a user.
    for (int n : counts) {
      if (n == 1) continue;
      for (int i = 1; i <= n; ++i) {
        cdc::KeyShard shard{i, n};
        Must(sql->Exec(cdc::CreatePublicationSql(
                 cdc::ShardedName("outbox_publisher", shard), {"outbox"},
                 cdc::ShardRowFilter("aggregate_id", shard))),
             "shard publication");
      }
    }
    for (int r = 0; r < rounds; ++r) {
      for (int n : counts) {
        for (int i = 1; i <= n; ++i) {
          Must(sql->Exec(absl::StrCat("SELECT pg_create_logical_replication_slot('",
                                      ShardSlot(r, n, i), "', 'pgoutput')")),
               "create slot");
        }
      }
    }
    WriteBacklog(*sql, rows, 10, 100);
    cdc::Lsn end =
        Must(cdc::Lsn::Parse(
                 Must(sql->Value("SELECT pg_current_wal_insert_lsn()::text"), "lsn")),
             "lsn");
    std::vector<ShardResult> results;
    std::map<int, std::vector<ShardResult>> runs;
    // Rounds alternate the shard counts, so that each count sees the same load.
    for (int r = 0; r < rounds; ++r) {
      for (int n : counts) {
        ShardResult run = ShardRun(*pg, *sql, end, rows, r, n);
        std::cerr << absl::StrFormat(
                         "bench: shards: round %d: %d shard(s) %.1fk rows/s, walsenders "
                         "%.2f s CPU (busiest %.2f s)",
                         r + 1, n, run.rows_s / 1e3, run.walsender_cpu_s,
                         run.walsender_cpu_s_max)
                  << std::endl;
        runs[n].push_back(run);
      }
    }
    for (int n : counts) {
      std::vector<double> rate, cpu, busiest, publisher;
      for (const ShardResult& x : runs[n]) {
        rate.push_back(x.rows_s);
        cpu.push_back(x.walsender_cpu_s);
        busiest.push_back(x.walsender_cpu_s_max);
        publisher.push_back(x.publisher_cpu_us_per_row);
      }
      ShardResult m;
      m.shards = n;
      m.rows_s = Median(rate);
      m.rows_s_low = *std::min_element(rate.begin(), rate.end());
      m.rows_s_high = *std::max_element(rate.begin(), rate.end());
      m.walsender_cpu_s = Median(cpu);
      m.walsender_cpu_s_max = Median(busiest);
      m.publisher_cpu_us_per_row = Median(publisher);
      results.push_back(m);
    }
    return results;
  }

  // `rounds`: paired runs of the limit and the publisher per workload.
  Bench(std::vector<std::string> publisher_flags, int rounds)
      : publisher_flags_(std::move(publisher_flags)), rounds_(rounds) {}

  Result RunWorkload(const Workload& w) {
    std::cerr << "bench: " << w.name << ": writing the backlog" << std::endl;
    // Not for a broker that answers in 1 s: its figure is the broker's, and one run
    // takes minutes.
    const int rounds = w.broker_rtt_ms > 0 ? 1 : rounds_;
    // A slot per run: three per round and pg_recvlogical's.
    auto pg =
        Must(PgCluster::Start({"max_wal_size=4GB", "checkpoint_timeout=30min",
                               absl::StrCat("max_replication_slots=", 3 * rounds + 1)}),
             "start PostgreSQL");
    auto sql = Must(pg->Connect(), "connect");
    Must(sql->Exec(OutboxSchema()), "schema");
    std::vector<std::string> slots = {"bench_recvlogical"};
    for (int i = 0; i < rounds; ++i) {
      for (const char* kind : {"bench_limit_", "bench_limit_nap_", "bench_publisher_"})
        slots.push_back(absl::StrCat(kind, i));
    }
    for (const std::string& slot : slots) {
      Must(sql->Exec(absl::StrCat("SELECT pg_create_logical_replication_slot('", slot,
                                  "', 'pgoutput')")),
           "create slot");
    }
    WriteBacklog(*sql, w.rows, w.rows_per_tx, w.payload_bytes);
    std::string end = Must(sql->Value("SELECT pg_current_wal_insert_lsn()::text"), "lsn");

    Result r{w};
    r.recvlogical_rows_s =
        w.rows / Time({"/usr/lib/postgresql/15/bin/pg_recvlogical", "-d", pg->conninfo(),
                       "--slot", "bench_recvlogical", "--start", "-o", "proto_version=1",
                       "-o", "publication_names=outbox_publisher", "--endpos", end, "-f",
                       "/dev/null", "--no-loop"});
    // Rounds of the limit and the publisher, one right after the other, so that each
    // ratio compares runs under the same load on a shared machine (one run alone
    // swings by a third); the medians count. The limit of a round is the faster of
    // the raw reader blocking for every message and napping 100 us when dry.
    std::vector<double> limit_s, limit_cpu, publisher_s, publisher_cpu, ratios;
    for (int i = 0; i < rounds; ++i) {
      double best = 0, best_cpu = 0;
      for (const char* nap : {"", "100"}) {
        std::vector<std::string> argv = {
            BuildPath("bench-raw-reader"), pg->conninfo(),
            absl::StrCat(*nap ? "bench_limit_nap_" : "bench_limit_", i),
            "outbox_publisher", end};
        if (*nap) argv.push_back(nap);
        double cpu = 0, seconds = Time(argv, &cpu);
        if (best == 0 || seconds < best) best = seconds, best_cpu = cpu;
      }
      PublisherRun run =
          RunPublisher(*pg, *sql, end, absl::StrCat("bench_publisher_", i), w);
      limit_s.push_back(best);
      limit_cpu.push_back(best_cpu);
      publisher_s.push_back(run.seconds);
      publisher_cpu.push_back(run.cpu_seconds);
      ratios.push_back(best / run.seconds);
      // Each round on stderr: a median hides whether the rounds agree or split.
      std::cerr << absl::StrFormat(
                       "bench: %s: round %d: limit %.1fk rows/s, publisher %.1fk "
                       "rows/s, %.2fx",
                       w.name, i + 1, w.rows / best / 1e3, w.rows / run.seconds / 1e3,
                       best / run.seconds)
                << std::endl;
      r.peak_rss_kib = std::max(r.peak_rss_kib, run.peak_rss_kib);
    }
    r.rounds = rounds;
    r.limit_rows_s = w.rows / Median(limit_s);
    r.limit_cpu_us_per_row = Median(limit_cpu) * 1e6 / w.rows;
    r.publisher_rows_s = w.rows / Median(publisher_s);
    r.cpu_us_per_row = Median(publisher_cpu) * 1e6 / w.rows;
    r.ratio = Median(ratios);
    r.ratio_low = *std::min_element(ratios.begin(), ratios.end());
    r.ratio_high = *std::max_element(ratios.begin(), ratios.end());
    r.sink_cpu_us_per_row = SinkFloor(w);
    return r;
  }

  // bench-sink-floor's CPU per message for records the size of this workload's
  // envelopes (the payload plus about 150 bytes of other fields).
  double SinkFloor(const Workload& w) {
    auto mock = Must(MockKafka::Start(1), "mock-kafka");
    if (mock->Command(absl::StrCat("topic ", kTopic, " ", kPartitions)) != "ok")
      Die("topic");
    int64_t messages = std::min<int64_t>(w.rows, 200000);
    return ProducingAlone(mock->bootstrap(), kTopic, messages, w.payload_bytes + 150)
        .cpu_us_per_msg;
  }

  // An outbox table against transactional messages (--message-prefix): what each
  // costs the database, and the publisher's throughput for each.
  struct CarrierResult {
    std::string name;
    int64_t events = 0;
    double wal_bytes_per_event = 0, writer_tx_s = 0, writer_events_s = 0;
    double publisher_events_s = 0, cpu_us_per_event = 0;
  };
  CarrierResult Carrier(bool messages, int64_t events, int64_t per_tx) {
    CarrierResult c;
    c.name = absl::StrCat(messages ? "message" : "table", ", ", per_tx, " event(s)/tx");
    c.events = events;
    std::cerr << "bench: " << c.name << ": writing " << events << " events" << std::endl;
    auto pg = Must(PgCluster::Start({"max_wal_size=4GB", "checkpoint_timeout=30min"}),
                   "start PostgreSQL");
    auto sql = Must(pg->Connect(), "connect");
    Must(sql->Exec(OutboxSchema()), "schema");
    Must(sql->Exec("SELECT pg_create_logical_replication_slot('outbox_publisher', "
                   "'pgoutput')"),
         "create slot");
    // The same event either way: outbox_emit()'s JSON content, or its columns.
    std::string write =
        messages ? "PERFORM pg_logical_emit_message(true, 'outbox', jsonb_build_object("
                   "'id', 'r' || g, 'aggregate_type', 'bench', 'aggregate_id', "
                   "'a' || (g % 1000), 'event_type', 'E', 'payload', "
                   "jsonb_build_object('pad', repeat('x', 88)))::text) "
                   "FROM generate_series(n, n + per_tx - 1) g;"
                 : "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, "
                   "payload) SELECT 'r' || g, 'bench', 'a' || (g % 1000), 'E', "
                   "jsonb_build_object('pad', repeat('x', 88)) "
                   "FROM generate_series(n, n + per_tx - 1) g;";
    Must(sql->Exec("SET synchronous_commit = off"), "set");
    std::string before =
        Must(sql->Value("SELECT pg_current_wal_insert_lsn()::text"), "lsn");
    absl::Time start = absl::Now();
    Must(sql->Exec(absl::StrCat("DO $$ DECLARE n bigint := 0; per_tx bigint := ", per_tx,
                                "; BEGIN WHILE n < ", events, " LOOP ", write,
                                " n := n + per_tx; COMMIT; END LOOP; END $$")),
         "write");
    double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    std::string end = Must(sql->Value("SELECT pg_current_wal_insert_lsn()::text"), "lsn");
    uint64_t wal = Must(cdc::Lsn::Parse(end), "lsn").value() -
                   Must(cdc::Lsn::Parse(before), "lsn").value();
    c.wal_bytes_per_event = static_cast<double>(wal) / events;
    c.writer_events_s = events / seconds;
    c.writer_tx_s = c.writer_events_s / per_tx;
    Workload w{c.name, events, per_tx, 100,
               messages ? std::vector<std::string>{"--message-prefix", "outbox"}
                        : std::vector<std::string>{}};
    PublisherRun run = RunPublisher(*pg, *sql, end, "outbox_publisher", w);
    c.publisher_events_s = events / run.seconds;
    c.cpu_us_per_event = run.cpu_seconds * 1e6 / events;
    return c;
  }

  // Single-row transactions at `rate` per second for `duration`.
  Latency SteadyState(int rate, absl::Duration duration,
                      std::vector<std::string> publisher_args = {}) {
    std::cerr << "bench: steady state: " << rate << " tx/s for "
              << absl::FormatDuration(duration) << " "
              << absl::StrJoin(publisher_args, " ") << std::endl;
    Bed bed = StartBed();
    PgCluster* pg = bed.pg.get();
    harness::PgSession* sql = bed.sql.get();
    MockKafka* mock = bed.mock.get();
    if (mock->Command("topic outbox.checkpoints 1") != "ok") Die("checkpoint topic");
    int metrics_port = harness::FreeTcpPort();
    publisher_args.insert(publisher_args.end(),
                          {"--metrics-port", absl::StrCat(metrics_port)});
    auto publisher = StartPublisher(*pg, *mock, "steady", publisher_args);
    // The latency is measured from when it streams (/healthz 200: its producer is
    // made; in exactly-once mode that follows taking the slot), after a warm-up row.
    auto consumer = Must(Consumer::Start(mock->bootstrap(), {kTopic}), "consumer");
    WarmUpPublisher(*sql, metrics_port, *publisher, absl::Seconds(60));
    std::string warm = ScrapeMetrics(metrics_port);
    Latency l = MeasureSteady(*sql, *consumer, rate, duration);
    std::string metrics = ScrapeMetrics(metrics_port);
    publisher->Signal(SIGTERM);
    publisher->Wait(absl::Seconds(60));
    l.ack_p50_ms = HistogramQuantileMs(metrics, 0.50, warm);
    l.ack_p99_ms = HistogramQuantileMs(metrics, 0.99, warm);
    return l;
  }

  // The steady state's floor on the broker side (ProducingAloneLatency), into a
  // fresh mock-kafka.
  Latency ProducingAloneLatency(int rate, absl::Duration duration) {
    auto mock = Must(MockKafka::Start(1), "mock-kafka");
    if (mock->Command(absl::StrCat("topic ", kTopic, " ", kPartitions)) != "ok")
      Die("topic");
    auto consumer = Must(Consumer::Start(mock->bootstrap(), {kTopic}), "consumer");
    return bench::ProducingAloneLatency(mock->bootstrap(), kTopic, *consumer, rate,
                                        duration);
  }

  // Takeover: an active publisher and a standby on the same slot. While
  // a writer commits a row every 5 ms, kill -9 the active one and time from the
  // kill until the first row committed after it reaches a consumer. `trials`
  // times, each with a fresh standby behind the new active one.
  std::vector<absl::Duration> Takeover(int trials) {
    std::cerr << "bench: takeover: " << trials << " kill -9s of the active publisher"
              << std::endl;
    Bed bed = StartBed();
    PgCluster* pg = bed.pg.get();
    harness::PgSession* sql = bed.sql.get();
    MockKafka* mock = bed.mock.get();
    auto consumer = Must(Consumer::Start(mock->bootstrap(), {kTopic}), "consumer");
    auto start = [&](int n, const std::string& wanted) {
      int port = harness::FreeTcpPort();
      auto p = StartPublisher(*pg, *mock, absl::StrCat("takeover-", n),
                              {"--metrics-port", absl::StrCat(port)});
      httplib::Client health("127.0.0.1", port);
      if (!WaitFor(
              [&] {
                auto h = health.Get("/healthz");
                return h && h->body.find(wanted) != std::string::npos;
              },
              absl::Seconds(60)))
        Die("takeover: publisher " + std::to_string(n) + " never said " + wanted + ": " +
            p->Log());
      return p;
    };
    std::unique_ptr<Process> active = start(0, "ok");
    PrepareInsert(*sql);
    std::atomic<int64_t> next{0};
    std::atomic<bool> writing{true};
    std::thread writer([&] {
      auto session = Must(pg->Connect(), "connect");
      PrepareInsert(*session);
      while (writing) {
        Must(session->Exec(absl::StrCat("EXECUTE ins('", next.load(), "')")), "insert");
        ++next;
        absl::SleepFor(absl::Milliseconds(5));
      }
    });
    std::vector<absl::Duration> gaps;
    for (int t = 1; t <= trials; ++t) {
      std::unique_ptr<Process> standby = start(t, "standing by");
      int64_t flowing = next.load();
      if (!WaitFor([&] { return consumer->Count() > static_cast<size_t>(flowing); },
                   absl::Seconds(60)))
        Die("takeover: rows do not flow before the kill");
      absl::Time killed = absl::Now();
      active->Signal(SIGKILL);
      active->Wait(absl::Seconds(10));
      int64_t after = next.load() + 1;  // Surely committed after the kill.
      std::optional<absl::Time> first;
      WaitFor(
          [&] {
            for (const auto& rec : consumer->Records()) {
              if (std::stoll(rec.key) >= after && (!first || rec.received < *first))
                first = rec.received;
            }
            return first.has_value();
          },
          absl::Seconds(60));
      if (!first) Die("takeover: the standby never published: " + standby->Log());
      gaps.push_back(*first - killed);
      active = std::move(standby);
    }
    writing = false;
    writer.join();
    active->Signal(SIGTERM);
    active->Wait(absl::Seconds(60));
    return gaps;
  }

 private:
  // A PostgreSQL cluster with the outbox table, and mock-kafka with kTopic.
  struct Bed {
    std::unique_ptr<PgCluster> pg;
    std::unique_ptr<harness::PgSession> sql;
    std::unique_ptr<MockKafka> mock;
  };
  static Bed StartBed() {
    Bed b;
    b.pg = Must(PgCluster::Start(), "start PostgreSQL");
    b.sql = Must(b.pg->Connect(), "connect");
    Must(b.sql->Exec(OutboxSchema()), "schema");
    b.mock = Must(MockKafka::Start(1), "mock-kafka");
    if (b.mock->Command(absl::StrCat("topic ", kTopic, " ", kPartitions)) != "ok")
      Die("topic");
    return b;
  }

  // Runs argv to completion; returns its wall time in seconds, and its CPU time
  // (user+sys, all threads) in `cpu_seconds` when given.
  double Time(const std::vector<std::string>& argv, double* cpu_seconds = nullptr) {
    std::string log = absl::StrCat("/tmp/outbox-bench-", getpid(), "-", ++runs_, ".log");
    double children_before = ChildrenCpuSeconds();
    absl::Time start = absl::Now();
    auto p = Must(Process::Start(argv, log), argv[0]);
    std::optional<int> code = p->Wait(absl::Minutes(30));
    if (!code || *code != 0)
      Die(absl::StrCat(argv[0], " failed (exit ", code.value_or(-1), "): ", p->Log()));
    double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    // Waited for, so its usage is now part of RUSAGE_CHILDREN.
    if (cpu_seconds != nullptr) *cpu_seconds = ChildrenCpuSeconds() - children_before;
    std::remove(log.c_str());
    return seconds;
  }

  static double ChildrenCpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    auto secs = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
    return secs(u.ru_utime) + secs(u.ru_stime);
  }

  std::unique_ptr<Process> StartPublisher(PgCluster& pg, MockKafka& mock,
                                          const std::string& name,
                                          std::vector<std::string> extra = {}) {
    return StartBenchPublisher(pg.conninfo(), mock.bootstrap(), kTopic, extra,
                               publisher_flags_,
                               absl::StrCat("/tmp/outbox-bench-", name, ".log"));
  }

  struct PublisherRun {
    double seconds = 0, cpu_seconds = 0;
    int64_t peak_rss_kib = 0;
  };

  // Runs the publisher on `slot` until it confirmed the backlog: its time from its
  // start, its CPU (all threads) and its peak RSS.
  PublisherRun RunPublisher(PgCluster& pg, harness::PgSession& sql,
                            const std::string& end, const std::string& slot,
                            const Workload& w) {
    // As a user runs it: the default topic template (outbox.event.{aggregate_type},
    // i.e. kTopic), the topic auto-created by the broker on first use.
    auto mock = Must(MockKafka::Start(1), "mock-kafka");
    if (w.broker_rtt_ms > 0 &&
        mock->Command(absl::StrCat("rtt all ", w.broker_rtt_ms)) != "ok")
      Die("rtt");
    cdc::Lsn target = Must(cdc::Lsn::Parse(end), "lsn");
    absl::Time start = absl::Now();
    if (mock->Command("topic outbox.checkpoints 1") != "ok") Die("checkpoint topic");
    std::vector<std::string> args = w.publisher_args;
    args.insert(args.end(), {"--slot", slot});
    auto publisher = StartBenchPublisher(
        pg.conninfo(), mock->bootstrap(), /*topic=*/"", args, publisher_flags_,
        absl::StrCat("/tmp/outbox-bench-",
                     absl::StrReplaceAll(w.name, {{"/", "-"}, {" ", ""}, {",", "-"}}),
                     ".log"));
    bool done = WaitFor(
        [&] {
          auto v = sql.Value(
              absl::StrCat("SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                           "WHERE slot_name = '",
                           slot, "'"));
          return v.ok() && *cdc::Lsn::Parse(*v) >= target;
        },
        absl::Minutes(30));
    PublisherRun run;
    run.seconds = absl::ToDoubleSeconds(absl::Now() - start);
    ProcessUsage usage = Usage(publisher->pid());  // Still running: all its threads.
    if (!done || !publisher->running()) Die("publisher: " + publisher->Log());
    publisher->Signal(SIGTERM);
    publisher->Wait(absl::Seconds(60));
    run.cpu_seconds = usage.cpu_seconds;
    run.peak_rss_kib = usage.peak_rss_kib;
    return run;
  }

  static std::string ShardSlot(int round, int n, int i) {
    std::string base = absl::StrCat("bench_shards_", round, "_", n);
    return n == 1 ? base : cdc::ShardedName(base, cdc::KeyShard{i, n});
  }

  // PG_VERSION when it has row filters (15+), else 15.
  static int RowFilterVersion() {
    int v = 0;
    const char* env = std::getenv("PG_VERSION");
    if (env == nullptr || !absl::SimpleAtoi(env, &v) || v < 15) return 15;
    return v;
  }

  ShardResult ShardRun(PgCluster& pg, harness::PgSession& sql, cdc::Lsn end, int64_t rows,
                       int round, int n) {
    // A mock-kafka per shard: one mock broker serving several producers was the
    // bottleneck (two shards ran at a third of one), and a real cluster grows with
    // its brokers. What is measured is PostgreSQL's side and the publishers'.
    std::vector<std::unique_ptr<MockKafka>> mocks;
    for (int i = 0; i < n; ++i) {
      mocks.push_back(Must(MockKafka::Start(1), "mock-kafka"));
      if (mocks.back()->Command(absl::StrCat("topic ", kTopic, " ", kPartitions)) != "ok")
        Die("topic");
    }
    std::vector<std::unique_ptr<harness::Process>> publishers;
    std::vector<std::string> slots;
    absl::Time start = absl::Now();
    for (int i = 1; i <= n; ++i) {
      std::vector<std::string> args = {
          "--slot", absl::StrCat("bench_shards_", round, "_", n), "--create", "false"};
      if (n > 1) args.insert(args.end(), {"--shard", absl::StrCat(i, "/", n)});
      slots.push_back(ShardSlot(round, n, i));
      publishers.push_back(StartBenchPublisher(
          pg.conninfo(), mocks[i - 1]->bootstrap(), /*topic=*/"", args, publisher_flags_,
          absl::StrCat("/tmp/outbox-bench-shard-", i, "-of-", n, ".log")));
    }
    // Each walsender's CPU, read while it lives.
    std::map<std::string, ProcessUsage> walsenders;
    std::vector<bool> done(n, false);
    bool all = WaitFor(
        [&] {
          bool finished = true;
          for (int i = 0; i < n; ++i) {
            if (done[i]) continue;
            auto v = sql.Value(absl::StrCat(
                "SELECT confirmed_flush_lsn::text || ' ' || coalesce(active_pid, 0) FROM "
                "pg_replication_slots WHERE slot_name = '",
                slots[i], "'"));
            if (!v.ok()) return false;
            std::vector<std::string> parts = absl::StrSplit(*v, ' ');
            int pid = 0;
            if (parts.size() == 2 && absl::SimpleAtoi(parts[1], &pid) && pid > 0)
              walsenders[slots[i]] = Usage(pid);
            auto lsn = cdc::Lsn::Parse(parts[0]);
            done[i] = lsn.ok() && *lsn >= end;
            finished = finished && done[i];
          }
          return finished;
        },
        absl::Minutes(30));
    ShardResult run;
    run.shards = n;
    run.rows_s = rows / absl::ToDoubleSeconds(absl::Now() - start);
    double publisher_cpu = 0;
    for (auto& p : publishers) {
      publisher_cpu += Usage(p->pid()).cpu_seconds;
      if (!all || !p->running()) Die("shard publisher: " + p->Log());
    }
    for (auto& p : publishers) p->Signal(SIGTERM);
    for (auto& p : publishers) p->Wait(absl::Seconds(60));
    for (const auto& [slot, usage] : walsenders) {
      run.walsender_cpu_s += usage.cpu_seconds;
      run.walsender_cpu_s_max = std::max(run.walsender_cpu_s_max, usage.cpu_seconds);
    }
    run.publisher_cpu_us_per_row = publisher_cpu * 1e6 / rows;
    return run;
  }

  std::vector<std::string> publisher_flags_;
  int rounds_;
  int runs_ = 0;
};

std::string SteadyLine(const char* mode, const Latency& steady, int steady_rate) {
  return absl::StrFormat(
      "\nSteady state, %s: %d single-row transactions/s asked, %.0f/s achieved, %d "
      "rows; commit-to-consumer latency %s; the "
      "publisher's commit-to-acknowledgement (its /metrics histogram) p50 ~%.1f ms, "
      "p99 ~%.1f ms\n",
      mode, steady_rate, steady.rate, steady.rows, LatencyFigures(steady),
      steady.ack_p50_ms, steady.ack_p99_ms);
}

std::string TakeoverLine(std::vector<absl::Duration> gaps) {
  if (gaps.empty()) return "";
  std::sort(gaps.begin(), gaps.end());
  return absl::StrFormat(
      "\nTakeover: kill -9 of the active publisher, a standby on the same slot (it "
      "retries every 2 s), a row committed every 5 ms: rows committed after the kill "
      "reached the consumer after median %.2f s, max %.2f s (%d trials)\n",
      absl::ToDoubleSeconds(gaps[gaps.size() / 2]), absl::ToDoubleSeconds(gaps.back()),
      static_cast<int>(gaps.size()));
}

std::string CarrierTable(const std::vector<Bench::CarrierResult>& carriers) {
  if (carriers.empty()) return "";
  std::ostringstream out;
  out << "\nOutbox table against transactional messages (--message-prefix), the same "
         "~100-byte event, written by one DO loop with synchronous_commit=off:\n\n"
         "| carrier | events | WAL bytes/event | writer commits/s | writer events/s | "
         "outbox-publisher events/s | publisher CPU µs/event |\n"
         "|---|---|---|---|---|---|---|\n";
  for (const Bench::CarrierResult& c : carriers) {
    out << absl::StrFormat("| %s | %d | %.0f | %.1fk | %.1fk | %.1fk | %.2f |\n", c.name,
                           c.events, c.wal_bytes_per_event, c.writer_tx_s / 1000,
                           c.writer_events_s / 1000, c.publisher_events_s / 1000,
                           c.cpu_us_per_event);
  }
  return out.str();
}

// 1, 2 and 4 shards: total rows/s, and what the walsenders cost the primary.
std::string ShardTable(const std::vector<Bench::ShardResult>& shards, int64_t rows,
                       int rounds) {
  if (shards.empty()) return "";
  std::ostringstream out;
  out << absl::StrFormat(
      "\n### Shards (--shard I/N), %d rows at 10 rows/tx, 100 B, mock-kafka, %d "
      "round(s)\n\n",
      rows, rounds);
  out << "| shards | total rows/s (lowest–highest) | × one publisher | walsenders' CPU s "
         "(all) | busiest walsender CPU s | primary's decoding CPU × one | publishers' "
         "CPU µs/row |\n|---|---|---|---|---|---|---|\n";
  const Bench::ShardResult& one = shards.front();
  for (const Bench::ShardResult& s : shards) {
    out << absl::StrFormat(
        "| %d | %.1fk (%.1fk–%.1fk) | %.2f× | %.2f | %.2f | %.2f× | %.2f |\n", s.shards,
        s.rows_s / 1e3, s.rows_s_low / 1e3, s.rows_s_high / 1e3, s.rows_s / one.rows_s,
        s.walsender_cpu_s, s.walsender_cpu_s_max, s.walsender_cpu_s / one.walsender_cpu_s,
        s.publisher_cpu_us_per_row);
  }
  return out.str();
}

std::string Table(const std::vector<Result>& results, const Latency& steady,
                  const Latency& alone, const Latency& steady_eo, int steady_rate) {
  std::ostringstream out;
  if (!results.empty())
    out << "| workload | rows | rounds | limit (raw libpq) rows/s | pg_recvlogical "
           "rows/s | outbox-publisher rows/s | publisher / limit (lowest–highest) | "
           "publisher CPU µs/row | limit CPU µs/row | producing alone CPU µs/row | "
           "publisher peak RSS MiB |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Result& r : results) {
    out << absl::StrFormat(
        "| %s | %d | %d | %.1fk | %.1fk | %.1fk | %.2f× (%.2f–%.2f) | %.2f | %.2f | %.2f "
        "| "
        "%.0f |\n",
        r.w.name, r.w.rows, r.rounds, r.limit_rows_s / 1000, r.recvlogical_rows_s / 1000,
        r.publisher_rows_s / 1000, r.ratio, r.ratio_low, r.ratio_high, r.cpu_us_per_row,
        r.limit_cpu_us_per_row, r.sink_cpu_us_per_row, r.peak_rss_kib / 1024.0);
  }
  if (steady.rows > 0) out << SteadyLine("at-least-once", steady, steady_rate);
  if (alone.rows > 0) {
    out << absl::StrFormat(
        "\nThe broker side alone (bench-sink-floor producing %d records/s with the "
        "publisher's producer settings into mock-kafka, the same consumer): "
        "produce-to-consumer latency %s\n",
        steady_rate, LatencyFigures(alone));
  }
  if (steady_eo.rows > 0) {
    out << SteadyLine(
        "exactly-once (--transaction-interval 100ms; mock-kafka serves "
        "records before their transaction commits, so only the "
        "commit-to-acknowledgement figures include the commit)",
        steady_eo, steady_rate);
  }
  return out.str();
}

int Main(int argc, char** argv) {
  BenchArgs args = ParseBenchArgs(argc, argv, "outbox-bench");
  harness::KillChildrenOnStopSignal();
  const bool quick = args.quick, steady_only = args.steady_only;
  const std::string &markdown = args.markdown, &only = args.only;
  const std::vector<std::string>& publisher_flags = args.publisher_flags;
  int64_t backlog = quick ? 5000 : 200000;
  int64_t big = quick ? 5000 : 50000;  // 4 KiB rows: a 200 MB backlog.
  std::vector<Workload> workloads = {
      {"1 row/tx, 100 B", backlog, 1, 100},
      {"10 rows/tx, 100 B", backlog, 10, 100},
      {"1 tx of 1M rows, 100 B", quick ? 5000 : 1000000, quick ? 5000 : 1000000, 100},
      {"1 row/tx, 4 KiB", big, 1, 4096},
      {"10 rows/tx, 4 KiB", big, 10, 4096},
      {"10 rows/tx, 100 B, broker answering in 1 s", backlog, 10, 100, {}, 1000},
      {"1 row/tx, 100 B, exactly-once", backlog, 1, 100, kExactlyOnce},
      {"10 rows/tx, 100 B, exactly-once", backlog, 10, 100, kExactlyOnce},
      {"1 tx of 1M rows, 100 B, exactly-once", quick ? 5000 : 1000000,
       quick ? 5000 : 1000000, 100, kExactlyOnce},
  };
  Bench bench(publisher_flags, quick ? 1 : 5);
  std::vector<Result> results;
  if (!steady_only) {
    bool exact = !only.empty() && only[0] == '=';
    std::string name = exact ? only.substr(1) : only;
    for (const Workload& w : workloads) {
      if (only.empty() ||
          (exact ? w.name == name : w.name.find(name) != std::string::npos))
        results.push_back(bench.RunWorkload(w));
    }
  }
  int rate = quick ? 500 : 5000;
  Latency steady, steady_eo;
  absl::Duration steady_for = quick ? absl::Seconds(3) : absl::Seconds(30);
  Latency alone;
  if (only.empty() || std::string("steady state").find(only) != std::string::npos) {
    steady = bench.SteadyState(rate, steady_for);
    alone = bench.ProducingAloneLatency(rate, steady_for);
  }
  if (only.empty() ||
      std::string("steady state, exactly-once").find(only) != std::string::npos)
    steady_eo = bench.SteadyState(rate, steady_for, kExactlyOnce);
  std::vector<Bench::CarrierResult> carriers;
  if (!steady_only) {
    for (int64_t per_tx : {1, 10}) {
      for (bool messages : {false, true}) {
        std::string name =
            absl::StrCat(messages ? "message" : "table", ", ", per_tx, " event(s)/tx");
        if (only.empty() || name.find(only) != std::string::npos)
          carriers.push_back(bench.Carrier(messages, backlog, per_tx));
      }
    }
  }
  std::vector<absl::Duration> takeover;
  if (only.empty() || std::string("takeover").find(only) != std::string::npos)
    takeover = bench.Takeover(quick ? 2 : 5);
  std::vector<Bench::ShardResult> shards;
  int64_t shard_rows = quick ? 5000 : 200000;
  int shard_rounds = quick ? 1 : 3;
  if (!steady_only &&
      (only.empty() || std::string("shards").find(only) != std::string::npos))
    shards = bench.Shards(shard_rows, shard_rounds);
  StandbyFigures standby;
  if (!steady_only &&
      (only.empty() || std::string("standby").find(only) != std::string::npos))
    standby = MeasureStandby(shard_rows, shard_rounds, rate, steady_for, publisher_flags);
  std::string table = Table(results, steady, alone, steady_eo, rate) +
                      TakeoverLine(takeover) + CarrierTable(carriers) +
                      ShardTable(shards, shard_rows, shard_rounds) +
                      StandbyTable(standby, shard_rows, shard_rounds, rate);
  Emit(table, markdown);
  return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) { return bench::Main(argc, argv); }

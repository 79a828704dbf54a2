// outbox-versus: the publisher and Debezium side by side, on the same
// machine, into the same real Apache Kafka broker (tools/harness/kafka_cluster.sh,
// one node, with the JVM settings of Kafka's own start scripts: --jvm as-shipped),
// in one run. Debezium is Kafka Connect standalone with its PostgreSQL
// connector (pgoutput) and the Outbox Event Router (tools/bench/debezium.sh says
// how it is configured, and why).
//
// Backlogs: one PostgreSQL cluster per workload, the backlog written after both
// slots exist; each contender then reads it from its own slot, one after the
// other, timed from its start (a JVM's start-up included, as the publisher's) until
// its slot is confirmed past the backlog's last commit. The publisher confirms a
// transaction's end; Debezium confirms its commit record's start after Connect
// flushes its offsets (every second here), so the last transaction is written
// alone and Debezium's target is the WAL position before it. Each contender's
// topic must then hold every row. CPU is user+sys of all its threads (the JVM's
// included); memory is peak RSS (VmHWM).
//
// An exactly-once backlog runs the publisher alone: Kafka Connect gives a source
// connector exactly-once delivery only in distributed mode (KIP-618), which this
// standalone worker is not.
//
// Steady state: single-row transactions at a fixed rate, commit to consumer, for
// each contender in a fresh PostgreSQL cluster, after a warm-up row and 15 s of
// the same traffic unmeasured (a JVM compiles its hot paths under load). Beside
// them, the broker side alone: bench-sink-floor paced at the same rate into the
// same broker, timed by the same consumer, the floor under both.
//
// --steady-only runs the publisher's steady state and the broker side alone (no
// backlogs, no Debezium): what to repeat when working on latency. --only runs the
// backlogs whose name contains WORKLOAD, and no steady state.
//
//   outbox-versus [--quick] [--steady-only | --only WORKLOAD] [--markdown FILE]
//                 [-- publisher flags ...]
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cdc/lsn.h"
#include "tools/bench/support.h"
#include "tools/harness/debezium_connect.h"
#include "tools/harness/fatal.h"
#include "tools/harness/kafka_cluster.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"
#include "tools/harness/shell.h"

namespace bench {
namespace {

using harness::BuildPath;
using harness::Consumer;
using harness::DebeziumConnect;
using harness::Die;
using harness::KafkaCluster;
using harness::Must;
using harness::PgCluster;
using harness::PgSession;
using harness::Process;
using harness::WaitFor;

constexpr char kDebeziumSlot[] = "bench_debezium";

// One contender's figures for one backlog.
struct Run {
  double rows_s = 0, cpu_us_per_row = 0, peak_rss_mib = 0;
  // Over rounds: the lowest and highest rows/s (rows_s and CPU are medians, RSS
  // the highest).
  double rows_s_low = 0, rows_s_high = 0;
  int rounds = 1;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2]
                           : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The median run of `runs`.
Run Summarize(const std::vector<Run>& runs) {
  std::vector<double> rate, cpu;
  Run m;
  for (const Run& r : runs) {
    rate.push_back(r.rows_s);
    cpu.push_back(r.cpu_us_per_row);
    m.peak_rss_mib = std::max(m.peak_rss_mib, r.peak_rss_mib);
  }
  m.rows_s = Median(rate);
  m.cpu_us_per_row = Median(cpu);
  m.rows_s_low = *std::min_element(rate.begin(), rate.end());
  m.rows_s_high = *std::max_element(rate.begin(), rate.end());
  m.rounds = static_cast<int>(runs.size());
  return m;
}

struct BacklogResult {
  std::string name;
  int64_t rows = 0;
  Run publisher;
  std::optional<Run> debezium;  // None for an exactly-once backlog.
  // The broker's floor: bench-sink-floor producing the same number of
  // envelope-sized records with the publisher's producer settings, no PostgreSQL.
  ProducingAloneFigures alone;
};

// A backlog of `rows` 100-byte rows, `per_tx` a transaction.
struct Backlog {
  std::string name;
  int64_t rows = 0, per_tx = 1;
  bool exactly_once = false;
};

// Kafka Connect with Debezium on the benchmark's slot and publication.
std::unique_ptr<DebeziumConnect> StartDebezium(PgCluster& pg,
                                               const std::string& bootstrap,
                                               const std::string& topic_prefix) {
  DebeziumConnect::Options o;
  o.bootstrap = bootstrap;
  o.pg_port = pg.port();
  o.slot = kDebeziumSlot;
  o.publication = "outbox_publisher";
  o.tables = "public.outbox";
  o.topic_prefix = topic_prefix;
  return Must(DebeziumConnect::Start(o), "start Debezium");
}

class Versus {
 public:
  Versus(bool quick, std::vector<std::string> publisher_flags)
      : quick_(quick),
        rounds_(quick ? 1 : 3),
        warm_up_(quick ? absl::Seconds(1) : absl::Seconds(15)),
        publisher_flags_(std::move(publisher_flags)) {
    kafka_ = Must(KafkaCluster::Start(1, {}, KafkaCluster::Jvm::kAsShipped),
                  "start Apache Kafka");
  }

  BacklogResult RunBacklog(const Backlog& b) {
    const std::string& name = b.name;
    const int64_t rows = b.rows, per_tx = b.per_tx;
    std::cerr << "versus: " << name << ": writing the backlog" << std::endl;
    BacklogResult r{name, rows, {}, std::nullopt, {}};
    auto pg = Must(PgCluster::Start({"max_wal_size=4GB", "checkpoint_timeout=30min"}),
                   "start PostgreSQL");
    auto sql = Must(pg->Connect(), "connect");
    Must(sql->Exec(OutboxSchema()), "schema");
    // A slot per round, and Debezium's.
    std::vector<std::string> slots = {kDebeziumSlot};
    for (int i = 0; i < rounds_; ++i)
      slots.push_back(absl::StrCat("outbox_publisher_", i));
    for (const std::string& slot : slots) {
      Must(sql->Exec(absl::StrCat("SELECT pg_create_logical_replication_slot('", slot,
                                  "', 'pgoutput')")),
           "create slot");
    }
    WriteBacklog(*sql, rows - per_tx, per_tx, 100);
    cdc::Lsn before_last = Lsn(*sql);
    WriteBacklog(*sql, per_tx, per_tx, 100, rows - per_tx);
    cdc::Lsn end = Lsn(*sql);
    if (b.exactly_once && !transactions_warm_) WarmUpTransactions(*pg, *sql);

    // Rounds of the publisher, each followed by producing alone, so that each
    // figure has its floor measured under the same load; medians count.
    std::vector<Run> runs, alone;
    std::string tag;
    for (int i = 0; i < rounds_; ++i) {
      // Topics of their own per run, made by the broker on first use, as a user's
      // default template's would be.
      tag = absl::StrCat("v", ++runs_, ".");
      std::cerr << "versus: " << name << ": outbox-publisher, round " << i + 1
                << std::endl;
      std::string slot = absl::StrCat("outbox_publisher_", i);
      absl::Time start = absl::Now();
      std::vector<std::string> extra = {"--slot", slot};
      // A transactional id per run: its checkpoint, in this broker, names an LSN of
      // another run's PostgreSQL cluster, which this one would take as published.
      if (b.exactly_once) {
        extra.insert(extra.end(), {"--delivery", "exactly-once", "--transactional-id",
                                   tag + "publisher"});
      }
      auto publisher = StartPublisher(*pg, tag, "backlog", extra);
      if (!WaitFor([&] { return Confirmed(*sql, slot) >= end; }, absl::Minutes(30)) ||
          !publisher->running())
        Die("publisher: " + publisher->Log());
      runs.push_back(Figures(rows, absl::Now() - start, Usage(publisher->pid())));
      publisher->Signal(SIGTERM);
      publisher->Wait(absl::Seconds(60));
      CheckTopic(tag + "outbox.event.bench", rows);
      // The same records' worth into the same broker, producing alone: a 100-byte
      // payload makes an envelope of about 250 bytes.
      std::cerr << "versus: " << name << ": producing alone" << std::endl;
      ProducingAloneFigures a =
          bench::ProducingAlone(kafka_->bootstrap(), tag + "alone.bench", rows, 250);
      alone.push_back(Run{a.msgs_per_s, a.cpu_us_per_msg, 0});
    }
    r.publisher = Summarize(runs);
    Run floor = Summarize(alone);
    r.alone = {floor.cpu_us_per_row, floor.rows_s};
    if (b.exactly_once) return r;

    std::cerr << "versus: " << name << ": Debezium" << std::endl;
    absl::Time start = absl::Now();
    {
      std::unique_ptr<DebeziumConnect> debezium =
          StartDebezium(*pg, kafka_->bootstrap(), tag + "debezium.outbox.event.");
      if (!WaitFor([&] { return Confirmed(*sql, kDebeziumSlot) >= before_last; },
                   absl::Minutes(30)) ||
          !debezium->running())
        Die("Debezium: " + debezium->LogTail());
      r.debezium = Figures(rows, absl::Now() - start, Usage(debezium->pid()));
    }
    CheckTopic(tag + "debezium.outbox.event.bench", rows);
    return r;
  }

  // Single-row transactions at `rate` for `duration` through the publisher
  // (debezium false) or Debezium, each in a PostgreSQL cluster of its own.
  Latency Steady(bool debezium, int rate, absl::Duration duration) {
    std::cerr << "versus: steady state, " << (debezium ? "Debezium" : "outbox-publisher")
              << std::endl;
    auto pg = Must(PgCluster::Start(), "start PostgreSQL");
    auto sql = Must(pg->Connect(), "connect");
    Must(sql->Exec(OutboxSchema()), "schema");
    Must(sql->Exec(absl::StrCat("SELECT pg_create_logical_replication_slot('",
                                debezium ? kDebeziumSlot : "outbox_publisher",
                                "', 'pgoutput')")),
         "create slot");
    std::string tag = absl::StrCat("v", ++runs_, ".");
    std::string topic = tag + (debezium ? "debezium." : "") + "outbox.event.bench";
    std::unique_ptr<Process> publisher;
    std::unique_ptr<DebeziumConnect> connect;
    int metrics_port = harness::FreeTcpPort();
    if (debezium) {
      connect = StartDebezium(*pg, kafka_->bootstrap(), tag + "debezium.outbox.event.");
    } else {
      publisher = StartPublisher(*pg, tag, "steady",
                                 {"--metrics-port", absl::StrCat(metrics_port)});
    }
    PrepareInsert(*sql);
    // Warm-up: start-up, the topic's creation and metadata are not the steady
    // state. Its key is out of the measured range.
    Must(sql->Exec("EXECUTE ins('4000000000')"), "warm-up insert");
    // The topic exists once the warm-up row made it.
    std::unique_ptr<Consumer> consumer;
    if (!WaitFor(
            [&] {
              if (consumer == nullptr) {
                auto c = Consumer::Start(kafka_->bootstrap(), {topic});
                if (!c.ok()) return false;
                consumer = std::move(*c);
              }
              return consumer->Count() >= 1;
            },
            absl::Seconds(120)))
      Die("steady state: the warm-up row never arrived");
    WarmUpSteady(*sql, rate, warm_up_);
    std::string warm = publisher ? ScrapeMetrics(metrics_port) : "";
    Latency l = MeasureSteady(*sql, *consumer, rate, duration);
    if (publisher) {
      std::string metrics = ScrapeMetrics(metrics_port);
      l.ack_p50_ms = HistogramQuantileMs(metrics, 0.50, warm);
      l.ack_p99_ms = HistogramQuantileMs(metrics, 0.99, warm);
      publisher->Signal(SIGTERM);
      publisher->Wait(absl::Seconds(60));
    }
    return l;
  }

  // The broker side alone on this broker (ProducingAloneLatency): into a topic of
  // the broker's default partition count (4), as the publisher's auto-created one,
  // after the same unmeasured warm-up.
  // With `beside_postgres`, PostgreSQL commits the same single-row transactions
  // at the same rate meanwhile (no slot, no publisher): on a machine this small,
  // the database's own work moves the broker's tail too.
  Latency ProducingAlone(int rate, absl::Duration duration,
                         bool beside_postgres = false) {
    std::string topic = absl::StrCat("v", ++runs_, ".alone");
    if (absl::Status s = kafka_->CreateTopic(topic, 4, 1); !s.ok())
      Die("create topic: " + s.ToString());
    auto consumer = Must(Consumer::Start(kafka_->bootstrap(), {topic}), "consumer");
    std::unique_ptr<PgCluster> pg;
    std::thread writer;
    if (beside_postgres) {
      pg = Must(PgCluster::Start(), "start PostgreSQL");
      auto sql = Must(pg->Connect(), "connect");
      Must(sql->Exec(OutboxSchema()), "schema");
      PrepareInsert(*sql);
      absl::Duration span = warm_up_ + duration + absl::Seconds(2);
      writer = std::thread([sql = std::move(sql), rate, span]() mutable {
        WarmUpSteady(*sql, rate, span);
      });
    }
    Latency l = ProducingAloneLatency(kafka_->bootstrap(), topic, *consumer, rate,
                                      duration, warm_up_);
    if (writer.joinable()) writer.join();
    return l;
  }

  bool quick() const { return quick_; }

 private:
  static cdc::Lsn Lsn(PgSession& sql) {
    return Must(cdc::Lsn::Parse(
                    Must(sql.Value("SELECT pg_current_wal_insert_lsn()::text"), "lsn")),
                "lsn");
  }
  static cdc::Lsn Confirmed(PgSession& sql, const std::string& slot) {
    auto v = sql.Value(absl::StrCat(
        "SELECT coalesce(confirmed_flush_lsn, '0/0')::text FROM pg_replication_slots "
        "WHERE slot_name = '",
        slot, "'"));
    if (!v.ok()) return cdc::Lsn();
    auto lsn = cdc::Lsn::Parse(*v);
    return lsn.ok() ? *lsn : cdc::Lsn();
  }
  static Run Figures(int64_t rows, absl::Duration took, const ProcessUsage& u) {
    return {rows / absl::ToDoubleSeconds(took), u.cpu_seconds * 1e6 / rows,
            u.peak_rss_kib / 1024.0};
  }

  // The publisher at its defaults but for the topic template's prefix.
  std::unique_ptr<Process> StartPublisher(PgCluster& pg, const std::string& tag,
                                          const std::string& name,
                                          std::vector<std::string> extra = {}) {
    return StartBenchPublisher(
        pg.conninfo(), kafka_->bootstrap(), tag + "outbox.event.{aggregate_type}", extra,
        publisher_flags_, absl::StrCat("/tmp/outbox-versus-", name, ".log"));
  }

  // Every row is in `topic` (counted by a consumer from the beginning).
  void CheckTopic(const std::string& topic, int64_t rows) {
    auto consumer = Must(Consumer::Start(kafka_->bootstrap(), {topic}), "consumer");
    if (!WaitFor([&] { return consumer->Count() >= static_cast<size_t>(rows); },
                 absl::Minutes(5)))
      Die(absl::StrCat(topic, " holds ", consumer->Count(), " of ", rows, " rows"));
  }

  // An exactly-once publisher's first Kafka transaction on a new broker makes the
  // broker's transaction state topic, once (about half a second): done before the
  // first measured exactly-once run, as on any cluster that has used transactions.
  // One row, after the backlog's end, from a slot of its own.
  void WarmUpTransactions(PgCluster& pg, PgSession& sql) {
    std::cerr << "versus: warming up the broker's transaction coordinator" << std::endl;
    Must(sql.Exec("SELECT pg_create_logical_replication_slot('versus_warm_up', "
                  "'pgoutput')"),
         "create slot");
    WriteBacklog(sql, 1, 1, 100, 4000000000);
    cdc::Lsn end = Lsn(sql);
    auto publisher =
        StartPublisher(pg, "warm.", "warm-up",
                       {"--slot", "versus_warm_up", "--delivery", "exactly-once",
                        "--transactional-id", absl::StrCat("warm-up-", ++runs_)});
    if (!WaitFor([&] { return Confirmed(sql, "versus_warm_up") >= end; },
                 absl::Minutes(5)))
      Die("warm-up publisher: " + publisher->Log());
    publisher->Signal(SIGTERM);
    publisher->Wait(absl::Seconds(60));
    Must(sql.Exec("SELECT pg_drop_replication_slot('versus_warm_up')"), "drop slot");
    transactions_warm_ = true;
  }

  bool quick_;
  int rounds_;  // Of the publisher on each backlog.
  bool transactions_warm_ = false;
  absl::Duration warm_up_;  // Of the steady state: unmeasured traffic at its rate.
  std::vector<std::string> publisher_flags_;
  std::unique_ptr<KafkaCluster> kafka_;
  int runs_ = 0;
};

// The backlogs' table, and why Debezium has no exactly-once row.
std::string BacklogReport(const std::vector<BacklogResult>& backlogs) {
  std::ostringstream out;
  if (!backlogs.empty()) {
    out << "| workload | rows | contender | rows/s | / producing alone | CPU µs/row | "
           "peak "
           "RSS MiB |\n"
           "|---|---|---|---|---|---|---|\n";
  }
  for (const BacklogResult& b : backlogs) {
    std::vector<std::pair<const char*, Run>> runs = {{"outbox-publisher", b.publisher}};
    if (b.debezium)
      runs.emplace_back("Debezium 3.6.1 (Kafka Connect 4.1.1)", *b.debezium);
    for (const auto& [who, run] : runs) {
      std::string range = run.rounds > 1
                              ? absl::StrFormat(" (%.1fk–%.1fk)", run.rows_s_low / 1000,
                                                run.rows_s_high / 1000)
                              : "";
      out << absl::StrFormat("| %s | %d | %s | %.1fk%s | %.2f× | %.2f | %.0f |\n", b.name,
                             b.rows, who, run.rows_s / 1000, range,
                             run.rows_s / b.alone.msgs_per_s, run.cpu_us_per_row,
                             run.peak_rss_mib);
    }
    out << absl::StrFormat(
        "| %s | %d | producing alone (bench-sink-floor, no PostgreSQL) | %.1fk | 1.00× | "
        "%.2f | — |\n",
        b.name, b.rows, b.alone.msgs_per_s / 1000, b.alone.cpu_us_per_msg);
  }
  // Exactly-once beside at-least-once, workload by workload.
  for (const BacklogResult& eo : backlogs) {
    if (eo.debezium) continue;
    for (const BacklogResult& alo : backlogs) {
      if (!alo.debezium || eo.name != alo.name + ", exactly-once") continue;
      out << absl::StrFormat(
          "\n%s: exactly-once / at-least-once = %.2f× (medians of %d rounds each; "
          "lowest over highest %.2f×, highest over lowest %.2f×)",
          alo.name, eo.publisher.rows_s / alo.publisher.rows_s, eo.publisher.rounds,
          eo.publisher.rows_s_low / alo.publisher.rows_s_high,
          eo.publisher.rows_s_high / alo.publisher.rows_s_low);
    }
  }
  if (std::any_of(backlogs.begin(), backlogs.end(),
                  [](const BacklogResult& b) { return !b.debezium; })) {
    out << "\n";
    out << "\nDebezium has no exactly-once row: Kafka Connect gives a source connector "
           "exactly-once delivery only in distributed mode (KIP-618), not in the "
           "standalone worker used here.\n";
  }
  return out.str();
}

// Debezium's steady state is left out when `theirs` is null (--steady-only).
std::string SteadyReport(const Latency& ours, const Latency& alone, const Latency& beside,
                         const Latency* theirs, int rate) {
  std::ostringstream out;
  auto line = [&](const char* who, const Latency& l) {
    out << absl::StrFormat(
        "\nSteady state, %s: %d single-row transactions/s asked, %.0f/s achieved, %d "
        "rows; "
        "commit-to-consumer latency %s",
        who, rate, l.rate, l.rows, LatencyFigures(l));
    if (l.ack_p99_ms > 0) {
      out << absl::StrFormat(
          "; its own commit-to-acknowledgement (/metrics) p50 ~%.1f ms, p99 ~%.1f ms",
          l.ack_p50_ms, l.ack_p99_ms);
    }
    out << "\n";
  };
  line("outbox-publisher", ours);
  out << absl::StrFormat(
      "\nThe broker side alone (bench-sink-floor producing %d records/s with the "
      "publisher's producer settings into this broker, the same consumer): "
      "produce-to-consumer latency %s\n",
      rate, LatencyFigures(alone));
  out << absl::StrFormat(
      "\nThe broker side alone while PostgreSQL commits the same %d single-row "
      "transactions/s beside it (no slot, no publisher): %s\n",
      rate, LatencyFigures(beside));
  if (theirs != nullptr) line("Debezium", *theirs);
  return out.str();
}

int Main(int argc, char** argv) {
  BenchArgs args = ParseBenchArgs(argc, argv, "outbox-versus");
  harness::KillChildrenOnStopSignal();
  const bool quick = args.quick, steady_only = args.steady_only;
  const std::string &markdown = args.markdown, &only = args.only;
  const std::vector<std::string>& publisher_flags = args.publisher_flags;
  Versus versus(quick, publisher_flags);
  int64_t backlog = quick ? 5000 : 200000;
  const std::vector<Backlog> workloads = {
      {"1 row/tx, 100 B", backlog, 1},
      {"10 rows/tx, 100 B", backlog, 10},
      {"1 row/tx, 100 B, exactly-once", backlog, 1, true},
      {"10 rows/tx, 100 B, exactly-once", backlog, 10, true},
  };
  std::vector<BacklogResult> backlogs;
  if (!steady_only) {
    for (const Backlog& b : workloads) {
      if (b.name.find(only) != std::string::npos)
        backlogs.push_back(versus.RunBacklog(b));
    }
  }
  if (!only.empty()) {
    Emit(BacklogReport(backlogs), markdown);
    return 0;
  }
  // Steady states: 5,000 single-row transactions/s, then 20,000 (a quarter of
  // what the publisher takes in a backlog on this machine).
  std::vector<int> rates = quick ? std::vector<int>{500} : std::vector<int>{5000, 20000};
  absl::Duration steady_for = quick ? absl::Seconds(3) : absl::Seconds(30);
  std::string report = BacklogReport(backlogs);
  for (int rate : rates) {
    Latency ours = versus.Steady(false, rate, steady_for);
    Latency alone = versus.ProducingAlone(rate, steady_for);
    Latency beside = versus.ProducingAlone(rate, steady_for, /*beside_postgres=*/true);
    std::optional<Latency> theirs;
    if (!steady_only) theirs = versus.Steady(true, rate, steady_for);
    report += SteadyReport(ours, alone, beside, theirs ? &*theirs : nullptr, rate);
  }
  Emit(report, markdown);
  return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) { return bench::Main(argc, argv); }

// The standby benchmark: servers, slots, runs, the report.
#include "tools/bench/standby.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cdc/catalog_facts.h"
#include "cdc/key_shard.h"
#include "cdc/lsn.h"
#include "tools/harness/fatal.h"

namespace bench {
namespace {

using harness::Consumer;
using harness::Die;
using harness::MockKafka;
using harness::Must;
using harness::PgCluster;
using harness::PgSession;
using harness::WaitFor;

constexpr char kTopic[] = "outbox.event.bench";
constexpr int kPartitions = 32;

// PG_VERSION when it decodes on a standby (16+), else 17.
int StandbyVersion() {
  int v = 0;
  const char* env = std::getenv("PG_VERSION");
  if (env == nullptr || !absl::SimpleAtoi(env, &v) || v < 16) return 17;
  return v;
}

cdc::Lsn LsnOf(PgSession& sql, const std::string& query) {
  return Must(cdc::Lsn::Parse(Must(sql.Value(query), query)), "lsn");
}

// One publisher of a run: where it reads, and its slot.
struct Target {
  PgCluster* server;
  bool standby;
  std::string base;  // --slot, with "{r}" for the round.
  int shard = 0;     // --shard I/2; 0 = unsharded.
  // Filled in for a round (Round).
  std::string slot = {};               // As the server names it.
  std::vector<std::string> args = {};  // --slot, --shard, --create.
};

class StandbyBench {
 public:
  explicit StandbyBench(std::vector<std::string> publisher_flags)
      : flags_(std::move(publisher_flags)) {}

  StandbyFigures Run(int64_t rows, int rounds, int rate, absl::Duration steady_for) {
    StandbyFigures f;
    f.version = StandbyVersion();
    StartServers(f.version);
    std::vector<std::vector<Target>> kinds = MakeSlots(rounds);
    std::cerr << "bench: standby: writing the backlog" << std::endl;
    WriteBacklog(*primary_sql_, rows, 10, 100);
    cdc::Lsn end = LsnOf(*primary_sql_, "SELECT pg_current_wal_insert_lsn()::text");
    for (PgCluster* s : {standby1_.get(), standby2_.get()}) {
      auto sql = Must(s->Connect(), "connect");
      if (!WaitFor([&] { return LsnOf(*sql, kReplayLsn) >= end; }, absl::Minutes(10)))
        Die("a standby did not replay the backlog");
    }
    const std::vector<std::string> names = {"from the primary", "from a standby",
                                            "2 shards on the primary",
                                            "2 shards, one per standby"};
    std::map<std::string, std::vector<StandbyRun>> runs;
    // Rounds alternate the kinds, so that each sees the same load.
    for (int r = 0; r < rounds; ++r) {
      for (size_t k = 0; k < names.size(); ++k) {
        std::vector<Target> targets = Round(kinds[k], r);
        StandbyRun run = Publish(targets, end, rows);
        run.where = names[k];
        std::cerr << absl::StrFormat(
                         "bench: standby: round %d: %s %.1fk rows/s, primary walsenders "
                         "%.2f s CPU, decoding %.2f s CPU",
                         r + 1, names[k], run.rows_s / 1e3, run.primary_walsender_cpu_s,
                         run.decoding_cpu_s)
                  << std::endl;
        runs[names[k]].push_back(run);
      }
    }
    for (const std::string& name : names) {
      std::vector<double> rate_v, primary_v, decoding_v, publisher_v;
      for (const StandbyRun& x : runs[name]) {
        rate_v.push_back(x.rows_s);
        primary_v.push_back(x.primary_walsender_cpu_s);
        decoding_v.push_back(x.decoding_cpu_s);
        publisher_v.push_back(x.publisher_cpu_us_per_row);
      }
      f.backlog.push_back({name, Median(rate_v), Median(primary_v), Median(decoding_v),
                           Median(publisher_v)});
    }
    f.steady_primary = Steady(*primary_, false, rate, steady_for);
    f.steady_standby = Steady(*standby1_, true, rate, steady_for);
    return f;
  }

 private:
  static constexpr char kReplayLsn[] = "SELECT pg_last_wal_replay_lsn()::text";

  void StartServers(int version) {
    // A standby needs max_wal_senders (and the like) at least the primary's.
    std::vector<std::string> settings = {"max_wal_size=4GB", "checkpoint_timeout=30min",
                                         "max_replication_slots=64",
                                         "max_wal_senders=24"};
    primary_ = Must(PgCluster::Start(settings, version), "start PostgreSQL");
    primary_sql_ = Must(primary_->Connect(), "connect");
    Must(primary_sql_->Exec(OutboxSchema()), "schema");
    for (int i = 1; i <= 2; ++i) {
      cdc::KeyShard shard{i, 2};
      Must(primary_sql_->Exec(cdc::CreatePublicationSql(
               cdc::ShardedName("outbox_publisher", shard), {"outbox"},
               cdc::ShardRowFilter("aggregate_id", shard))),
           "shard publication");
    }
    settings.push_back("hot_standby_feedback=on");
    standby1_ = Must(PgCluster::StartStandby(*primary_, "standby1", settings), "standby");
    standby2_ = Must(PgCluster::StartStandby(*primary_, "standby2", settings), "standby");
  }

  // Every round's slots, before the backlog: per kind, its targets with the round
  // number left as "{r}" in the slot names.
  std::vector<std::vector<Target>> MakeSlots(int rounds) {
    std::vector<std::vector<Target>> kinds = {
        {{primary_.get(), false, "bp_{r}"}},
        {{standby1_.get(), true, "bs_{r}"}},
        {{primary_.get(), false, "bpsh_{r}", 1}, {primary_.get(), false, "bpsh_{r}", 2}},
        {{standby1_.get(), true, "bssh_{r}", 1}, {standby2_.get(), true, "bssh_{r}", 2}},
    };
    for (int r = 0; r < rounds; ++r) {
      for (const std::vector<Target>& kind : kinds) {
        for (const Target& t : Round(kind, r)) CreateSlot(t);
      }
    }
    return kinds;
  }

  // `kind`'s targets for round `r`: slot names and flags filled in.
  static std::vector<Target> Round(std::vector<Target> kind, int r) {
    for (Target& t : kind) {
      std::string base = absl::StrReplaceAll(t.base, {{"{r}", absl::StrCat(r)}});
      t.slot = t.shard == 0 ? base : cdc::ShardedName(base, cdc::KeyShard{t.shard, 2});
      t.args = {"--slot", base, "--create", "false"};
      if (t.shard != 0)
        t.args.insert(t.args.end(), {"--shard", absl::StrCat(t.shard, "/2")});
    }
    return kind;
  }

  // The slot of `t`; on a standby, asking the primary every 100 ms for the
  // running-transactions record that the creation waits for.
  void CreateSlot(const Target& t) {
    auto sql = Must(t.server->Connect(), "connect");
    std::atomic<bool> done{false};
    std::thread nudge;
    if (t.standby) {
      nudge = std::thread([&] {
        auto p = Must(primary_->Connect(), "connect");
        while (!done) {
          (void)p->Exec("SELECT pg_log_standby_snapshot()");
          absl::SleepFor(absl::Milliseconds(100));
        }
      });
    }
    Must(sql->Exec(absl::StrCat("SELECT pg_create_logical_replication_slot('", t.slot,
                                "', 'pgoutput')")),
         "create slot " + t.slot);
    done = true;
    if (nudge.joinable()) nudge.join();
  }

  // The targets' publishers, each into its own mock-kafka, timed from their start
  // until every slot is confirmed past `end`; every walsender's CPU read while it
  // lives.
  StandbyRun Publish(const std::vector<Target>& targets, cdc::Lsn end, int64_t rows) {
    std::vector<std::unique_ptr<MockKafka>> mocks;
    std::vector<std::unique_ptr<harness::Process>> publishers;
    std::map<int, double> primary_before = PrimaryWalsenders();
    std::map<int, double> primary_now = primary_before;
    std::map<std::string, double> decoding;
    absl::Time start = absl::Now();
    for (const Target& t : targets) {
      mocks.push_back(Must(MockKafka::Start(1), "mock-kafka"));
      if (mocks.back()->Command(absl::StrCat("topic ", kTopic, " ", kPartitions)) != "ok")
        Die("topic");
      std::vector<std::string> args = t.args;
      if (t.standby) args.insert(args.end(), {"--pg-primary", primary_->conninfo()});
      publishers.push_back(StartBenchPublisher(
          t.server->conninfo(), mocks.back()->bootstrap(), /*topic=*/"", args, flags_,
          absl::StrCat("/tmp/outbox-bench-standby-", t.slot, ".log")));
    }
    std::vector<std::unique_ptr<PgSession>> sessions;
    for (const Target& t : targets)
      sessions.push_back(Must(t.server->Connect(), "connect"));
    std::vector<bool> done(targets.size(), false);
    bool all = WaitFor(
        [&] {
          for (const auto& [pid, cpu] : PrimaryWalsenders()) primary_now[pid] = cpu;
          bool finished = true;
          for (size_t i = 0; i < targets.size(); ++i) {
            if (done[i]) continue;
            auto v = sessions[i]->Value(absl::StrCat(
                "SELECT confirmed_flush_lsn::text || ' ' || coalesce(active_pid, 0) FROM "
                "pg_replication_slots WHERE slot_name = '",
                targets[i].slot, "'"));
            if (!v.ok()) return false;
            std::vector<std::string> parts = absl::StrSplit(*v, ' ');
            int pid = 0;
            if (parts.size() == 2 && absl::SimpleAtoi(parts[1], &pid) && pid > 0)
              decoding[targets[i].slot] = Usage(pid).cpu_seconds;
            auto lsn = cdc::Lsn::Parse(parts[0]);
            done[i] = lsn.ok() && *lsn >= end;
            finished = finished && done[i];
          }
          return finished;
        },
        absl::Minutes(30));
    StandbyRun run;
    run.rows_s = rows / absl::ToDoubleSeconds(absl::Now() - start);
    double publisher_cpu = 0;
    for (auto& p : publishers) {
      publisher_cpu += Usage(p->pid()).cpu_seconds;
      if (!all || !p->running()) Die("standby bench publisher: " + p->Log());
    }
    for (auto& p : publishers) p->Signal(SIGTERM);
    for (auto& p : publishers) p->Wait(absl::Seconds(60));
    for (const auto& [pid, cpu] : primary_now) {
      auto before = primary_before.find(pid);
      run.primary_walsender_cpu_s +=
          cpu - (before == primary_before.end() ? 0 : before->second);
    }
    for (const auto& [slot, cpu] : decoding) run.decoding_cpu_s += cpu;
    run.publisher_cpu_us_per_row = publisher_cpu * 1e6 / rows;
    return run;
  }

  // Every walsender of the primary (its standbys' and any publisher's): its CPU.
  std::map<int, double> PrimaryWalsenders() {
    std::map<int, double> out;
    auto rows = primary_sql_->Exec("SELECT pid::text FROM pg_stat_replication");
    if (!rows.ok()) return out;
    for (const auto& row : *rows) {
      int pid = 0;
      if (row[0] && absl::SimpleAtoi(*row[0], &pid)) out[pid] = Usage(pid).cpu_seconds;
    }
    return out;
  }

  // Single-row transactions at `rate` on the primary, published from `server`
  // (which makes its own slot), commit to consumer.
  Latency Steady(PgCluster& server, bool standby, int rate, absl::Duration duration) {
    std::cerr << "bench: standby: steady state from the "
              << (standby ? "standby" : "primary") << std::endl;
    auto mock = Must(MockKafka::Start(1), "mock-kafka");
    if (mock->Command(absl::StrCat("topic ", kTopic, " ", kPartitions)) != "ok")
      Die("topic");
    int port = harness::FreeTcpPort();
    std::vector<std::string> args = {"--metrics-port", absl::StrCat(port)};
    if (standby) args.insert(args.end(), {"--pg-primary", primary_->conninfo()});
    auto publisher = StartBenchPublisher(
        server.conninfo(), mock->bootstrap(), kTopic, args, flags_,
        absl::StrCat("/tmp/outbox-bench-standby-steady-", standby, ".log"));
    auto sql = Must(primary_->Connect(), "connect");
    WarmUpPublisher(*sql, port, *publisher, absl::Seconds(120));
    auto consumer = Must(Consumer::Start(mock->bootstrap(), {kTopic}), "consumer");
    Latency l = MeasureSteady(*sql, *consumer, rate, duration);
    publisher->Signal(SIGTERM);
    publisher->Wait(absl::Seconds(60));
    // The next run's slot has the same name on another server: not a gap.
    Must(server.Exec("SELECT pg_drop_replication_slot('outbox_publisher')"), "drop slot");
    Must(sql->Exec("DELETE FROM outbox_publisher_state"), "state table");
    Must(sql->Exec("TRUNCATE outbox"), "truncate");  // The next run's keys again.
    return l;
  }

  std::vector<std::string> flags_;
  std::unique_ptr<PgCluster> primary_, standby1_, standby2_;
  std::unique_ptr<PgSession> primary_sql_;
};

}  // namespace

StandbyFigures MeasureStandby(int64_t rows, int rounds, int rate,
                              absl::Duration steady_for,
                              const std::vector<std::string>& publisher_flags) {
  return StandbyBench(publisher_flags).Run(rows, rounds, rate, steady_for);
}

std::string StandbyTable(const StandbyFigures& f, int64_t rows, int rounds, int rate) {
  if (f.backlog.empty()) return "";
  std::string out = absl::StrFormat(
      "\n### Publishing from a standby (PostgreSQL %d), %d rows at 10 rows/tx, 100 B, "
      "mock-kafka, %d round(s)\n\nThe primary's walsenders include its two standbys' "
      "(streaming an idle WAL); decoding is the publishers' walsenders, wherever they "
      "run.\n\n| published | rows/s | primary's walsenders CPU s | decoding CPU s | "
      "publisher CPU µs/row |\n|---|---|---|---|---|\n",
      f.version, rows, rounds);
  for (const StandbyRun& r : f.backlog) {
    absl::StrAppendFormat(&out, "| %s | %.0f | %.2f | %.2f | %.1f |\n", r.where, r.rows_s,
                          r.primary_walsender_cpu_s, r.decoding_cpu_s,
                          r.publisher_cpu_us_per_row);
  }
  absl::StrAppendFormat(&out,
                        "\nCommit (on the primary) to consumer at %d rows/s: from the "
                        "primary %s; from a standby %s.\n",
                        rate, LatencyFigures(f.steady_primary),
                        LatencyFigures(f.steady_standby));
  return out;
}

}  // namespace bench

// outbox-chaos: a Jepsen-style fault-injection run of outbox-publisher.
//
//   outbox-chaos [--rows N] [--faults F] [--seed S] [--max-tx-rows R] [--aggregates A]
//
// A writer commits outbox rows continuously (transactions of 1..R rows across A
// aggregates, each row numbered within its aggregate in commit order) while a
// fault injector, at random moments, kills and restarts the publisher (kill -9 and
// SIGTERM), takes the broker down and up, injects broker request errors and delay,
// restarts PostgreSQL, terminates the walsender, and starts a second publisher on
// the same slot (which must take over when the first dies). A verifier consumes
// concurrently. At the end it checks, against the table (the history of what was
// committed):
//   - every committed id was delivered (zero loss);
//   - per aggregate, the first delivery of each id follows commit order;
// and reports duplicates, faults survived and the longest commit-to-delivery time.
// Exit status 0 only when nothing was lost, order held and every fault was injected.
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cdc/lsn.h"
#include "tests/harness/pg_cluster.h"
#include "tests/harness/processes.h"

namespace chaos {
namespace {

using testing_harness::Consumer;
using testing_harness::MockKafka;
using testing_harness::PgCluster;
using testing_harness::PgSession;
using testing_harness::Process;
using testing_harness::WaitFor;

constexpr char kTopic[] = "outbox.event.chaos";

struct Options {
  int64_t rows = 200000;
  int faults = 30;
  uint64_t seed = 1;
  int max_tx_rows = 500;
  int aggregates = 200;
};

void Say(const std::string& line) { std::cout << "chaos: " << line << std::endl; }

[[noreturn]] void Die(const std::string& why) {
  std::cerr << "chaos: FATAL: " << why << std::endl;
  std::exit(2);
}

template <typename T>
T Must(absl::StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(absl::StrCat(what, ": ", v.status().ToString()));
  return *std::move(v);
}

// The publisher processes: a primary and, for a while, a standby on the same slot.
class Publishers {
 public:
  Publishers(PgCluster& pg, const std::string& brokers, std::string dir)
      : pg_(pg), brokers_(brokers), dir_(std::move(dir)) {}

  std::unique_ptr<Process> Launch() {
    std::vector<std::string> argv = {testing_harness::BuildPath("outbox-publisher"),
                                     "--pg",
                                     pg_.conninfo(),
                                     "--brokers",
                                     brokers_,
                                     "--status-interval",
                                     "1s",
                                     "--stats-interval",
                                     "5s",
                                     "--max-in-flight",
                                     "20000",
                                     "-X",
                                     "reconnect.backoff.max.ms=1000"};
    return Must(
        Process::Start(argv, absl::StrCat(dir_, "/publisher-", ++launched_, ".log")),
        "start publisher");
  }

  // Makes sure a primary is running; restarts it if it exited (an exit 2 while
  // PostgreSQL restarts is legitimate: unreachable at start).
  void EnsurePrimary() {
    if (primary_ && primary_->running()) return;
    if (primary_) {
      std::optional<int> code = primary_->Wait(absl::ZeroDuration());
      if (code && *code != 0 && *code != 2 && !expected_exit_) {
        unexpected_exits_.push_back(
            absl::StrCat("exit ", *code, ": ", Tail(primary_->Log())));
      }
    }
    expected_exit_ = false;
    primary_ = Launch();
  }

  void KillPrimary(int sig) {
    EnsurePrimary();
    expected_exit_ = true;
    primary_->Signal(sig);
    primary_->Wait(absl::Seconds(60));
  }

  void StartStandby() {
    if (!standby_) standby_ = Launch();
  }

  // The primary dies; the standby, if any, becomes the primary.
  void FailOver() {
    if (!standby_) StartStandby();
    KillPrimary(SIGKILL);
    primary_ = std::move(standby_);
  }

  void StopAll() {
    for (auto* p : {&primary_, &standby_}) {
      if (*p && (*p)->running()) {
        (*p)->Signal(SIGTERM);
        (*p)->Wait(absl::Seconds(60));
      }
    }
  }

  const std::vector<std::string>& unexpected_exits() const { return unexpected_exits_; }

 private:
  static std::string Tail(const std::string& log) {
    return log.size() > 2000 ? log.substr(log.size() - 2000) : log;
  }

  PgCluster& pg_;
  std::string brokers_, dir_;
  std::unique_ptr<Process> primary_, standby_;
  bool expected_exit_ = false;
  int launched_ = 0;
  std::vector<std::string> unexpected_exits_;
};

// Consumes the topic; after a broker outage it resumes with a new consumer from
// the next offset of each partition (a consumer connected through the outage
// stalls on mock-kafka).
class Verifier {
 public:
  explicit Verifier(std::string brokers) : brokers_(std::move(brokers)) { Restart(); }

  void Restart() {
    Collect();
    consumer_.reset();
    seen_ = 0;  // The new consumer's records start from its first.
    Consumer::Offsets next;
    for (const auto& [partition, offset] : last_offset_)
      next[{kTopic, partition}] = offset + 1;
    consumer_ = Must(Consumer::Start(brokers_, {kTopic}, next), "start consumer");
  }

  // Pulls what the consumer has read since the last call.
  void Collect() {
    if (!consumer_) return;
    std::vector<testing_harness::ConsumedRecord> all = consumer_->Records();
    absl::Time now = absl::Now();
    for (size_t i = seen_; i < all.size(); ++i) {
      const auto& r = all[i];
      if (!seen_offsets_.insert({r.partition, r.offset}).second) continue;
      last_offset_[r.partition] = std::max(last_offset_[r.partition], r.offset);
      std::string id;
      for (const auto& [k, v] : r.headers) {
        if (k == "id") id = v;
      }
      ++deliveries_;
      if (!first_delivery_.count(id)) {
        first_delivery_[id] = now;
        by_partition_[r.partition].push_back({r.offset, id});
      }
    }
    seen_ = all.size();
  }

  // Collects; when `behind` (rows are known to be missing) and nothing arrived for
  // 3 s, starts a fresh consumer from the next offsets: a consumer of mock-kafka can
  // stall for good after a broker outage.
  void Tick(bool behind) {
    uint64_t before = deliveries_;
    Collect();
    absl::Time now = absl::Now();
    if (deliveries_ != before || !behind) {
      last_progress_ = now;
    } else if (now - last_progress_ > absl::Seconds(3)) {
      ++restarts_;
      Restart();
      last_progress_ = now;
    }
  }
  int restarts() const { return restarts_; }

  size_t distinct() const { return first_delivery_.size(); }
  uint64_t deliveries() const { return deliveries_; }
  const std::map<std::string, absl::Time>& first_delivery() const {
    return first_delivery_;
  }
  // Ids in first-delivery order within each partition.
  std::map<int32_t, std::vector<std::string>> FirstDeliveryOrder() const {
    std::map<int32_t, std::vector<std::string>> out;
    for (auto [p, list] : by_partition_) {
      std::sort(list.begin(), list.end());
      for (const auto& [offset, id] : list) out[p].push_back(id);
    }
    return out;
  }

 private:
  std::string brokers_;
  std::unique_ptr<Consumer> consumer_;
  size_t seen_ = 0;
  std::set<std::pair<int32_t, int64_t>> seen_offsets_;
  std::map<int32_t, int64_t> last_offset_;
  std::map<std::string, absl::Time> first_delivery_;
  std::map<int32_t, std::vector<std::pair<int64_t, std::string>>> by_partition_;
  uint64_t deliveries_ = 0;
  absl::Time last_progress_ = absl::Now();
  int restarts_ = 0;
};

// Commits transactions of 1..max rows; survives PostgreSQL restarts by
// reconnecting. Commit times are kept per id for the latency figure.
class Writer {
 public:
  Writer(PgCluster& pg, const Options& o, absl::Duration pace)
      : pg_(pg), options_(o), pace_(pace), rng_(o.seed * 7919 + 1) {}

  void Run(std::atomic<bool>& stop) {
    std::vector<int64_t> next_seq(options_.aggregates, 0);
    int64_t next_id = 0;
    std::unique_ptr<PgSession> sql;
    while (!stop && written_ < options_.rows) {
      if (!sql) {
        auto s = pg_.Connect();
        if (!s.ok()) {
          absl::SleepFor(absl::Milliseconds(200));
          continue;
        }
        sql = std::move(*s);
      }
      int n = std::uniform_int_distribution<int>(1, options_.max_tx_rows)(rng_);
      n = static_cast<int>(std::min<int64_t>(n, options_.rows - written_));
      std::vector<std::string> values;
      for (int i = 0; i < n; ++i) {
        int agg = std::uniform_int_distribution<int>(0, options_.aggregates - 1)(rng_);
        values.push_back(absl::StrCat("('r", next_id++, "', 'chaos', 'a", agg, "', ",
                                      next_seq[agg]++, ", 'E', '{\"n\": ", i, "}')"));
      }
      absl::Status s = sql->Exec(absl::StrCat("INSERT INTO outbox (id, aggregate_type, "
                                              "aggregate_id, seq, event_type, payload) "
                                              "VALUES ",
                                              absl::StrJoin(values, ", ")))
                           .status();
      absl::Time now = absl::Now();
      if (!s.ok()) {
        // Lost the connection mid-statement: it may or may not have committed. The
        // table is the history, so nothing needs remembering here.
        sql.reset();
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (int64_t id = next_id - n; id < next_id; ++id)
          commit_time_[absl::StrCat("r", id)] = now;
      }
      written_ += n;
      ++transactions_;
      absl::SleepFor(pace_);
    }
    done_ = true;
  }

  int64_t written() const { return written_; }
  int64_t transactions() const { return transactions_; }
  bool done() const { return done_; }
  std::optional<absl::Time> CommitTime(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = commit_time_.find(id);
    if (it == commit_time_.end()) return std::nullopt;
    return it->second;
  }

 private:
  PgCluster& pg_;
  Options options_;
  absl::Duration pace_;
  std::mt19937_64 rng_;
  std::atomic<int64_t> written_{0}, transactions_{0};
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::map<std::string, absl::Time> commit_time_;
};

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int64_t v;
    if (!absl::SimpleAtoi(argv[i + 1], &v) || v < 1)
      Die(absl::StrCat("bad value for ", flag));
    if (flag == "--rows")
      o.rows = v;
    else if (flag == "--faults")
      o.faults = static_cast<int>(v);
    else if (flag == "--seed")
      o.seed = static_cast<uint64_t>(v);
    else if (flag == "--max-tx-rows")
      o.max_tx_rows = static_cast<int>(v);
    else if (flag == "--aggregates")
      o.aggregates = static_cast<int>(v);
    else
      Die(absl::StrCat("unknown flag ", flag,
                       " (--rows, --faults, --seed, --max-tx-rows, --aggregates)"));
  }
  return o;
}

int Main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  Say(absl::StrCat("rows=", o.rows, " faults=", o.faults, " seed=", o.seed,
                   " max_tx_rows=", o.max_tx_rows, " aggregates=", o.aggregates));
  auto pg = Must(PgCluster::Start(), "start PostgreSQL");
  auto sql = Must(pg->Connect(), "connect");
  if (!sql->Exec(
              "CREATE TABLE outbox (id text PRIMARY KEY, aggregate_type text NOT NULL, "
              "aggregate_id text NOT NULL, seq bigint NOT NULL, event_type text NOT "
              "NULL, "
              "payload jsonb NOT NULL, headers jsonb, created_at timestamptz NOT NULL "
              "DEFAULT now())")
           .ok()) {
    Die("create table");
  }
  auto mock = Must(MockKafka::Start(1), "start mock-kafka");
  if (mock->Command(absl::StrCat("topic ", kTopic, " 32")) != "ok") Die("create topic");

  // Publisher logs outlive the cluster: they are the evidence when a check fails.
  char log_dir[] = "/tmp/outbox-chaos-logs.XXXXXX";
  if (mkdtemp(log_dir) == nullptr) Die("mkdtemp");
  Say(absl::StrCat("publisher logs in ", log_dir));
  Publishers publishers(*pg, mock->bootstrap(), log_dir);
  publishers.EnsurePrimary();
  if (!WaitFor(
          [&] {
            return !Must(pg->Exec("SELECT 1 FROM pg_replication_slots WHERE active"),
                         "slot")
                        .empty();
          },
          absl::Seconds(60))) {
    Die("the publisher never started streaming");
  }
  Verifier verifier(mock->bootstrap());

  // Pace the writer so that writing spans the fault schedule (about 2.5 s a fault).
  int64_t expected_tx = std::max<int64_t>(1, o.rows * 2 / (o.max_tx_rows + 1));
  absl::Duration pace = absl::Seconds(2.5) * o.faults / expected_tx;
  Writer writer(*pg, o, std::min(pace, absl::Milliseconds(500)));
  std::atomic<bool> stop_writer{false};
  std::thread writer_thread([&] { writer.Run(stop_writer); });

  std::mt19937_64 rng(o.seed);
  const std::vector<std::string> kinds = {
      "kill-9",       "sigterm",    "broker-down",         "broker-errors",
      "broker-delay", "pg-restart", "terminate-walsender", "second-publisher"};
  std::map<std::string, int> injected;
  for (int f = 0; f < o.faults; ++f) {
    absl::Time next = absl::Now() + absl::Milliseconds(std::uniform_int_distribution<int>(
                                        800, 2500)(rng));
    while (absl::Now() < next) {
      verifier.Tick(verifier.distinct() < static_cast<size_t>(writer.written()));
      absl::SleepFor(absl::Milliseconds(100));
    }
    publishers.EnsurePrimary();
    // Every kind once first, then at random.
    std::string kind =
        f < static_cast<int>(kinds.size())
            ? kinds[f]
            : kinds[std::uniform_int_distribution<size_t>(0, kinds.size() - 1)(rng)];
    Say(absl::StrCat("fault ", f + 1, "/", o.faults, ": ", kind, " (written ",
                     writer.written(), ", delivered ", verifier.distinct(), ")"));
    if (kind == "kill-9") {
      publishers.KillPrimary(SIGKILL);
      publishers.EnsurePrimary();
    } else if (kind == "sigterm") {
      publishers.KillPrimary(SIGTERM);
      publishers.EnsurePrimary();
    } else if (kind == "broker-down") {
      mock->Command("down all");
      absl::SleepFor(
          absl::Milliseconds(std::uniform_int_distribution<int>(500, 3000)(rng)));
      mock->Command("up all");
      verifier.Restart();
    } else if (kind == "broker-errors") {
      mock->Command(
          "errors Produce NOT_LEADER_FOR_PARTITION REQUEST_TIMED_OUT "
          "NOT_ENOUGH_REPLICAS LEADER_NOT_AVAILABLE NOT_ENOUGH_REPLICAS_AFTER_APPEND");
    } else if (kind == "broker-delay") {
      mock->Command("rtt all 700");
      absl::SleepFor(absl::Seconds(2));
      mock->Command("rtt all 0");
    } else if (kind == "pg-restart") {
      if (!pg->Restart("fast").ok()) Die("PostgreSQL did not restart");
    } else if (kind == "terminate-walsender") {
      (void)pg->Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots");
    } else if (kind == "second-publisher") {
      publishers.StartStandby();
      absl::SleepFor(absl::Seconds(2));
      publishers.FailOver();
    }
    ++injected[kind];
  }

  Say("faults done; waiting for the writer and for every row to arrive");
  writer_thread.join();
  publishers.EnsurePrimary();
  cdc::Lsn end = Must(
      cdc::Lsn::Parse(Must(pg->Value("SELECT pg_current_wal_insert_lsn()::text"), "lsn")),
      "lsn");
  bool caught_up = WaitFor(
      [&] {
        publishers.EnsurePrimary();
        auto v = pg->Value("SELECT confirmed_flush_lsn::text FROM pg_replication_slots");
        return v.ok() && *cdc::Lsn::Parse(*v) >= end;
      },
      absl::Minutes(5));
  auto committed =
      Must(pg->Exec("SELECT id, aggregate_id, seq FROM outbox"), "read history");
  WaitFor(
      [&] {
        verifier.Tick(true);
        return verifier.distinct() >= committed.size();
      },
      absl::Minutes(2));
  verifier.Collect();
  publishers.StopAll();

  // Zero loss.
  std::vector<std::string> lost;
  std::map<std::string, std::pair<std::string, int64_t>>
      history;  // id -> (aggregate, seq)
  for (const auto& row : committed) {
    history[*row[0]] = {*row[1], std::stoll(*row[2])};
    if (!verifier.first_delivery().count(*row[0])) lost.push_back(*row[0]);
  }
  // Per-aggregate commit order of first deliveries.
  int64_t order_violations = 0;
  std::map<std::string, int64_t> last_seq;
  std::map<std::string, int32_t> partition_of;
  for (const auto& [partition, ids] : verifier.FirstDeliveryOrder()) {
    for (const std::string& id : ids) {
      auto it = history.find(id);
      if (it == history.end()) continue;  // Not in the table: not a committed row.
      const auto& [aggregate, seq] = it->second;
      auto [p, fresh] = partition_of.emplace(aggregate, partition);
      if (!fresh && p->second != partition) ++order_violations;  // Key moved partition.
      auto [s, first] = last_seq.emplace(aggregate, seq);
      if (!first) {
        if (seq < s->second && ++order_violations <= 3) {
          Say(absl::StrCat("order violation: aggregate ", aggregate, " partition ",
                           partition, ": id ", id, " (seq ", seq,
                           ") first delivered after seq ", s->second));
        }
        s->second = std::max(s->second, seq);
      }
    }
  }
  absl::Duration worst;
  for (const auto& [id, delivered] : verifier.first_delivery()) {
    if (auto committed_at = writer.CommitTime(id))
      worst = std::max(worst, delivered - *committed_at);
  }
  int total_faults = 0;
  std::vector<std::string> by_kind;
  for (const auto& [k, n] : injected) {
    total_faults += n;
    by_kind.push_back(absl::StrCat(k, "=", n));
  }

  Say(absl::StrCat("committed rows: ", committed.size(), " in ", writer.transactions(),
                   " transactions"));
  Say(absl::StrCat(
      "delivered: ", verifier.distinct(), " distinct ids, ", verifier.deliveries(),
      " deliveries, duplicates: ", verifier.deliveries() - verifier.distinct()));
  Say(absl::StrCat("faults survived: ", total_faults, " (", absl::StrJoin(by_kind, ", "),
                   ")"));
  Say(absl::StrCat("lost: ", lost.size(),
                   lost.empty() ? "" : absl::StrCat(" e.g. ", lost[0])));
  Say(absl::StrCat("per-aggregate order violations: ", order_violations));
  Say(absl::StrCat("longest commit-to-delivery: ", absl::FormatDuration(worst)));
  Say(absl::StrCat("slot caught up: ", caught_up ? "yes" : "no"));
  Say(absl::StrCat("verifier consumer restarts: ", verifier.restarts()));
  for (const std::string& e : publishers.unexpected_exits())
    Say("unexpected publisher exit: " + e);

  bool ok = lost.empty() && order_violations == 0 && caught_up &&
            total_faults >= o.faults &&
            static_cast<int64_t>(committed.size()) >= o.rows &&
            publishers.unexpected_exits().empty();
  std::cout << (ok ? "1 passed, 0 failed" : "0 passed, 1 failed") << std::endl;
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace chaos

int main(int argc, char** argv) { return chaos::Main(argc, argv); }

#include "tools/chaos/consumers.h"

#include <signal.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/harness/fatal.h"
#include "tools/harness/pg_cluster.h"

namespace chaos {

using harness::Must;

ConsumerGroup::ConsumerGroup(std::string pg, std::string brokers, std::string topic,
                             std::string dir, std::vector<std::string> extra)
    : pg_(std::move(pg)),
      brokers_(std::move(brokers)),
      topic_(std::move(topic)),
      dir_(std::move(dir)),
      extra_(std::move(extra)) {}

ConsumerGroup::~ConsumerGroup() {
  stop_watch_ = true;
  if (watch_.joinable()) watch_.join();
}

void ConsumerGroup::Start() {
  auto sql = Must(harness::ConnectTo(pg_), "connect for the consumers' database");
  Must(sql->Exec("CREATE DATABASE paid_orders"), "create the consumers' database");
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < kInstances; ++i) instances_.push_back(Launch(i));
}

std::unique_ptr<harness::Process> ConsumerGroup::Launch(int i) {
  std::vector<std::string> argv = {harness::BuildPath("outbox-paid-orders"),
                                   "--pg",
                                   pg_ + " dbname=paid_orders",
                                   "--brokers",
                                   brokers_,
                                   "--group",
                                   "chaos-paid-orders",
                                   "--topic",
                                   topic_,
                                   "--log-stats-every",
                                   "10s"};
  // Each instance restarts under its own name, as a StatefulSet's pod does: with
  // static membership (KIP-345) it takes its partitions back without a rebalance.
  argv.insert(argv.end(),
              {"-X", absl::StrCat("group.instance.id=chaos-paid-orders-", i + 1)});
  argv.insert(argv.end(), extra_.begin(), extra_.end());
  return Must(harness::Process::Start(argv, absl::StrCat(dir_, "/consumer-", i + 1, "-",
                                                         ++launched_, ".log")),
              "start a consumer");
}

std::string ConsumerGroup::KillOne(int sig, std::mt19937_64& rng) {
  std::lock_guard<std::mutex> lock(mu_);
  int i = std::uniform_int_distribution<int>(0, kInstances - 1)(rng);
  harness::Process& p = *instances_[i];
  p.Signal(sig);
  p.Wait(absl::Seconds(60));
  instances_[i] = Launch(i);
  ++restarts_;
  return absl::StrCat("instance ", i + 1);
}

void ConsumerGroup::StopAll() {
  stop_watch_ = true;
  if (watch_.joinable()) watch_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : instances_) {
    p->Signal(SIGTERM);
    p->Wait(absl::Seconds(60));
  }
}

int64_t ConsumerGroup::Applied() {
  auto sql = harness::ConnectTo(pg_ + " dbname=paid_orders");
  if (!sql.ok()) return -1;
  auto v = (*sql)->Value("SELECT count(*) FROM payment_log");
  int64_t n = -1;
  return v.ok() && absl::SimpleAtoi(*v, &n) ? n : -1;
}

void ConsumerGroup::Watch(std::function<int64_t()> available) {
  watch_ = std::thread([this, available = std::move(available)] {
    std::unique_ptr<harness::PgSession> sql;
    int64_t last_seq = -1;
    absl::Time progress = absl::Now();
    while (!stop_watch_) {
      absl::SleepFor(absl::Milliseconds(500));
      if (!sql) {
        auto s = harness::ConnectTo(pg_ + " dbname=paid_orders");
        if (!s.ok()) continue;  // A failover or restart: the stall goes on.
        sql = std::move(*s);
      }
      // The log's sequence grows with every application: cheap to read.
      auto v = sql->Value("SELECT coalesce(max(seq), 0) FROM payment_log");
      int64_t seq = 0;
      if (!v.ok() || !absl::SimpleAtoi(*v, &seq)) {
        sql.reset();
        continue;
      }
      absl::Time now = absl::Now();
      if (seq > last_seq) {
        last_seq = seq;
        progress = now;
        continue;
      }
      // No application since `progress`: a stall if events wait meanwhile.
      auto applied = sql->Value("SELECT count(*) FROM payment_log");
      int64_t n = 0;
      if (!applied.ok() || !absl::SimpleAtoi(*applied, &n) || n >= available()) {
        progress = now;  // Nothing waits: idle, not stalled.
        continue;
      }
      if (now - progress > longest_stall_) {
        longest_stall_ = now - progress;
        longest_stall_start_ = progress;
      }
    }
  });
}

absl::Duration ConsumerGroup::longest_stall() { return longest_stall_; }
absl::Time ConsumerGroup::longest_stall_start() { return longest_stall_start_; }

ConsumerGroup::Effects ConsumerGroup::Read(
    const std::map<std::string, int64_t>& expected) {
  auto sql = Must(harness::ConnectTo(pg_ + " dbname=paid_orders"), "connect");
  Effects e;
  auto counts =
      Must(sql->Exec("SELECT count(*), count(DISTINCT event_id) FROM payment_log"),
           "count the applied events");
  (void)absl::SimpleAtoi(*counts[0][0], &e.applied);
  (void)absl::SimpleAtoi(*counts[0][1], &e.distinct);
  std::map<std::string, int64_t> payments;
  for (const auto& r : Must(sql->Exec("SELECT order_id, payments FROM order_payments"),
                            "read the orders")) {
    int64_t n = 0;
    (void)absl::SimpleAtoi(*r[1], &n);
    payments[*r[0]] = n;
  }
  for (const auto& [order, n] : expected) e.orders_wrong += payments[order] != n;
  for (const auto& [order, n] : payments) e.orders_wrong += expected.count(order) == 0;
  return e;
}

}  // namespace chaos

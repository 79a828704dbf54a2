#include "tools/chaos/watch.h"

#include <dirent.h>

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/harness/http_get.h"
#include "tools/harness/metrics_text.h"
#include "tools/harness/pg_cluster.h"

namespace chaos {

std::optional<ResourceSample> SampleProcess(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  if (!status) return std::nullopt;
  ResourceSample s{absl::Now()};
  for (std::string line; std::getline(status, line);) {
    auto field = [&](const char* name, auto* out) {
      if (line.rfind(name, 0) != 0) return;
      std::string v = line.substr(std::string(name).size());
      v.erase(0, v.find_first_not_of(" \t"));
      v = v.substr(0, v.find(' '));
      (void)absl::SimpleAtoi(v, out);
    };
    field("VmRSS:", &s.rss_kb);
    field("Threads:", &s.threads);
  }
  DIR* d = opendir(absl::StrCat("/proc/", pid, "/fd").c_str());
  if (d == nullptr) return std::nullopt;
  while (dirent* e = readdir(d)) s.fds += e->d_name[0] != '.';
  closedir(d);
  return s;
}

Watch::Watch(Publishers& publishers, int watched_shard, std::string slot_conninfo,
             std::function<std::vector<pid_t>()> broker_pids)
    : publishers_(publishers),
      watched_shard_(watched_shard),
      slot_conninfo_(std::move(slot_conninfo)),
      broker_pids_(std::move(broker_pids)) {}

Watch::~Watch() { Stop(); }

void Watch::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Watch::Stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  thread_.join();
  if (watched_port_ != 0) ReadMetrics(watched_port_);
}

void Watch::Run() {
  while (!stop_) {
    absl::Time next = absl::Now() + absl::Seconds(1);
    SampleOnce();
    while (!stop_ && absl::Now() < next) absl::SleepFor(absl::Milliseconds(50));
  }
}

void Watch::SampleOnce() {
  for (const Publishers::Running& r : publishers_.running()) {
    if (!r.primary) continue;
    auto [code, body] = harness::HttpGet(r.metrics_port, "/healthz");
    {
      std::lock_guard<std::mutex> lock(mu_);
      health_.push_back({absl::Now(), r.shard, code, body.substr(0, 300)});
    }
    if (r.shard != watched_shard_) continue;
    ReadMetrics(r.metrics_port);
    std::optional<ResourceSample> s = SampleProcess(r.pid);
    std::lock_guard<std::mutex> lock(mu_);
    if (s) publisher_.push_back(*s);
    watched_pids_.insert(r.pid);
    watched_log_ = r.log_path;
    watched_port_ = r.metrics_port;
  }
  // The watched shard's walsender: the slot's active_pid (one session, made again
  // after a restart or a failover).
  if (!sql_) {
    auto s = harness::ConnectTo(slot_conninfo_);
    if (s.ok()) sql_ = std::move(*s);
  }
  if (sql_) {
    auto rows = sql_->Exec(absl::StrCat(
        "SELECT active_pid::text FROM pg_replication_slots WHERE slot_type = 'logical' "
        "AND active AND slot_name LIKE '%\\_",
        watched_shard_ + 1, "\\_of\\_%'"));
    int64_t n = 0;
    if (!rows.ok()) {
      sql_.reset();
    } else if (!rows->empty() && (*rows)[0][0] && absl::SimpleAtoi(*(*rows)[0][0], &n)) {
      if (std::optional<ResourceSample> s = SampleProcess(static_cast<pid_t>(n))) {
        std::lock_guard<std::mutex> lock(mu_);
        walsender_.push_back(*s);
      }
    }
  }
  std::vector<pid_t> brokers = broker_pids_();
  for (size_t i = 0; i < brokers.size(); ++i) {
    if (brokers[i] <= 0) continue;
    if (std::optional<ResourceSample> s = SampleProcess(brokers[i])) {
      std::lock_guard<std::mutex> lock(mu_);
      brokers_[static_cast<int>(i) + 1].push_back(*s);
    }
  }
}

void Watch::ReadMetrics(int port) {
  auto [code, body] = harness::HttpGet(port, "/metrics");
  if (code != 200) return;
  auto get = [&](const char* name, const char* label = "") {
    return harness::MetricSum(body, name, label).value_or(0);
  };
  Counters c{get("outbox_publisher_published_total"),
             get("outbox_publisher_acknowledged_total"),
             get("outbox_publisher_rewinds_total"),
             get("outbox_publisher_reconnects_total"),
             get("outbox_publisher_kafka_transactions_total", "outcome=\"committed\""),
             get("outbox_publisher_kafka_transactions_total", "outcome=\"aborted\"")};
  double lag = get("outbox_publisher_lag_seconds");
  std::lock_guard<std::mutex> lock(mu_);
  counters_ = c;
  max_lag_ = std::max(max_lag_, lag);
}

std::vector<ResourceSample> Watch::publisher() {
  std::lock_guard<std::mutex> lock(mu_);
  return publisher_;
}
std::vector<ResourceSample> Watch::walsender() {
  std::lock_guard<std::mutex> lock(mu_);
  return walsender_;
}
std::map<int, std::vector<ResourceSample>> Watch::brokers() {
  std::lock_guard<std::mutex> lock(mu_);
  return brokers_;
}
std::vector<HealthSample> Watch::health() {
  std::lock_guard<std::mutex> lock(mu_);
  return health_;
}
Counters Watch::counters() {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}
double Watch::max_lag_seconds() {
  std::lock_guard<std::mutex> lock(mu_);
  return max_lag_;
}
std::set<pid_t> Watch::watched_pids() {
  std::lock_guard<std::mutex> lock(mu_);
  return watched_pids_;
}
std::string Watch::watched_log() {
  std::lock_guard<std::mutex> lock(mu_);
  return watched_log_;
}

}  // namespace chaos

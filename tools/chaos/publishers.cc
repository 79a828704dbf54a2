#include "tools/chaos/publishers.h"

#include <signal.h>

#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/harness/fatal.h"

namespace chaos {

Publishers::Publishers(std::string pg, std::string brokers, std::string dir,
                       std::vector<std::string> args, int shards)
    : pg_(std::move(pg)),
      brokers_(std::move(brokers)),
      dir_(std::move(dir)),
      args_(std::move(args)),
      shards_(shards) {}

void Publishers::EnsurePrimary() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < shards(); ++i) EnsurePrimaryLocked(i);
}

void Publishers::KillPrimary(int sig, int shard) {
  std::shared_ptr<harness::Process> p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    p = SignalPrimaryLocked(sig, shard);
  }
  WaitGone(*p);
}

void Publishers::StartStandby(int shard) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!shards_[shard].standby.process) shards_[shard].standby = Launch(shard);
}

void Publishers::FailOver(int shard) {
  std::shared_ptr<harness::Process> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Shard& s = shards_[shard];
    if (!s.standby.process) s.standby = Launch(shard);
    old = SignalPrimaryLocked(SIGKILL, shard);
    s.primary = std::move(s.standby);
    s.standby = Member{};
    s.expected_exit = false;  // It was the old primary's; the new one must stay.
  }
  WaitGone(*old);
}

void Publishers::WaitGone(harness::Process& p) {
  // Every look at a process is under the lock (its exit status is read once).
  harness::WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu_);
        return !p.running();
      },
      absl::Seconds(60));
}

void Publishers::StopAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Shard& s : shards_) {
    for (Member* m : {&s.primary, &s.standby}) {
      if (m->process && m->process->running()) {
        m->process->Signal(SIGTERM);
        m->process->Wait(absl::Seconds(60));
      }
    }
  }
}

std::vector<Publishers::Running> Publishers::running() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Running> out;
  for (size_t i = 0; i < shards_.size(); ++i) {
    Shard& s = shards_[i];
    for (Member* m : {&s.primary, &s.standby}) {
      if (m->process && m->process->running())
        out.push_back({m->process->pid(), m->metrics_port, m == &s.primary,
                       static_cast<int>(i), m->log_path});
    }
  }
  return out;
}

int Publishers::launched() {
  std::lock_guard<std::mutex> lock(mu_);
  return launched_;
}

std::vector<std::string> Publishers::unexpected_exits() {
  std::lock_guard<std::mutex> lock(mu_);
  return unexpected_exits_;
}

Publishers::Member Publishers::Launch(int shard) {
  Member m;
  m.metrics_port = harness::FreeTcpPort();
  std::vector<std::string> argv = {harness::BuildPath("outbox-publisher"),
                                   "--pg",
                                   pg_,
                                   "--brokers",
                                   brokers_,
                                   "--status-interval",
                                   "1s",
                                   "--log-stats-every",
                                   "5s",
                                   "--max-in-flight",
                                   "20000",
                                   "--metrics-port",
                                   absl::StrCat(m.metrics_port),
                                   "-X",
                                   "reconnect.backoff.max.ms=1000"};
  argv.insert(argv.end(), args_.begin(), args_.end());
  if (shards() > 1)
    argv.insert(argv.end(), {"--shard", absl::StrCat(shard + 1, "/", shards())});
  m.log_path = absl::StrCat(dir_, "/publisher-", ++launched_, ".log");
  m.process = std::shared_ptr<harness::Process>(
      harness::Must(harness::Process::Start(argv, m.log_path), "start publisher"));
  return m;
}

void Publishers::EnsurePrimaryLocked(int shard) {
  Shard& s = shards_[shard];
  if (s.primary.process && s.primary.process->running()) return;
  if (s.primary.process) {
    std::optional<int> code = s.primary.process->Wait(absl::ZeroDuration());
    if (!s.expected_exit) {
      // Said at once: a run cut short still shows when and how a publisher died
      // (128 + N is signal N; 139 a SIGSEGV, 134 a SIGABRT, 137 a SIGKILL).
      std::cout << "chaos: a publisher of shard " << shard + 1 << " exited by itself ("
                << (code ? absl::StrCat("exit ", *code) : "exit status unknown")
                << ", pid " << s.primary.process->pid() << ", " << s.primary.log_path
                << "); restarting it" << std::endl;
    }
    if (code && *code != 0 && *code != 2 && !s.expected_exit) {
      std::string log = s.primary.process->Log();
      if (log.size() > 2000) log = log.substr(log.size() - 2000);
      unexpected_exits_.push_back(absl::StrCat("exit ", *code, ": ", log));
    }
  }
  s.expected_exit = false;
  s.primary = Launch(shard);
}

std::shared_ptr<harness::Process> Publishers::SignalPrimaryLocked(int sig, int shard) {
  EnsurePrimaryLocked(shard);
  Shard& s = shards_[shard];
  s.expected_exit = true;
  s.primary.process->Signal(sig);
  return s.primary.process;
}

}  // namespace chaos

// Servers: start, proxy, fail over, rebuild.
#include "tools/chaos/servers.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/harness/fatal.h"

namespace chaos {
namespace {

using harness::Must;
using harness::PgCluster;

std::string MultiHost(const std::vector<int>& ports) {
  std::vector<std::string> hosts(ports.size(), "127.0.0.1");
  return absl::StrCat("host=", absl::StrJoin(hosts, ","), " port=", absl::StrJoin(ports, ","),
                      " user=postgres dbname=postgres connect_timeout=10",
                      ports.size() > 1 ? " target_session_attrs=read-write" : "");
}

}  // namespace

Servers::Servers(int version, bool standby, std::vector<std::string> settings)
    : settings_(std::move(settings)) {
  primary_ = Must(PgCluster::Start(settings_, version), "start PostgreSQL");
  ports_.push_back(primary_->port());
  if (standby) {
    std::string slot = absl::StrCat("standby_", 1);
    standby_ = Must(PgCluster::StartStandby(*primary_, slot, settings_), "start a standby");
    ports_.push_back(standby_->port());
    absl::Status s = SynchronizeWith(slot);
    if (!s.ok()) harness::Die(std::string(s.message()));
  }
  for (int port : ports_) {
    proxies_.push_back(
        Must(harness::BlackholeProxy::Start(absl::StrCat("127.0.0.1:", port)),
             "start blackhole-proxy"));
  }
}

std::string Servers::publisher_conninfo() const {
  std::vector<int> ports;
  for (const auto& p : proxies_) ports.push_back(p->port());
  return MultiHost(ports);
}

std::string Servers::direct_conninfo() const { return MultiHost(ports_); }

absl::Status Servers::Freeze() {
  for (auto& p : proxies_) {
    if (absl::Status s = p->Freeze(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Servers::Thaw() {
  for (auto& p : proxies_) {
    if (absl::Status s = p->Thaw(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The primary sends the publisher no change before this standby has it.
absl::Status Servers::SynchronizeWith(const std::string& physical_slot) {
  absl::Status s =
      primary_
          ->Exec(absl::StrCat("ALTER SYSTEM SET synchronized_standby_slots = '",
                              physical_slot, "'"))
          .status();
  if (!s.ok()) return s;
  return primary_->Exec("SELECT pg_reload_conf()").status();
}

absl::Status Servers::FailOver() {
  if (!standby_) return absl::FailedPreconditionError("no standby to fail over to");
  bool synced = harness::WaitFor(
      [&] {
        absl::StatusOr<std::string> v = standby_->Value(
            "SELECT synced AND NOT temporary FROM pg_replication_slots WHERE slot_type = "
            "'logical'");
        return v.ok() && *v == "t";
      },
      absl::Seconds(120));
  if (!synced) {
    return absl::DeadlineExceededError("the standby never synchronized the slot");
  }
  if (absl::Status s = primary_->Kill(); !s.ok()) return s;
  if (absl::Status s = standby_->Promote(); !s.ok()) return s;
  int old_port = primary_->port();
  primary_ = std::move(standby_);  // The old primary's directory is deleted here.
  ++failovers_;
  std::string slot = absl::StrCat("standby_", failovers_ + 1);
  absl::StatusOr<std::unique_ptr<PgCluster>> rebuilt =
      PgCluster::StartStandby(*primary_, slot, settings_, old_port);
  if (!rebuilt.ok()) return rebuilt.status();
  standby_ = std::move(*rebuilt);
  return SynchronizeWith(slot);
}

}  // namespace chaos

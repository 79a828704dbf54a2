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
  return absl::StrCat("host=", absl::StrJoin(hosts, ","),
                      " port=", absl::StrJoin(ports, ","),
                      " user=postgres dbname=postgres connect_timeout=10",
                      ports.size() > 1 ? " target_session_attrs=read-write" : "");
}

}  // namespace

Servers::Servers(int version, Topology topology, std::vector<std::string> settings)
    : settings_(std::move(settings)), topology_(topology) {
  primary_ = Must(PgCluster::Start(settings_, version), "start PostgreSQL");
  ports_.push_back(primary_->port());
  if (topology_ == Topology::kPrimary) {
    // No standby.
  } else if (topology_ == Topology::kFailoverSlots) {
    std::string slot = absl::StrCat("standby_", ++physical_slots_);
    standby_ =
        Must(PgCluster::StartStandby(*primary_, slot, settings_), "start a standby");
    ports_.push_back(standby_->port());
    absl::Status s = SynchronizeWith(slot);
    if (!s.ok()) harness::Die(std::string(s.message()));
  } else {
    standby_ = Must(
        PgCluster::StartStandby(*primary_, absl::StrCat("standby_", ++physical_slots_),
                                StandbySettings()),
        "start the spare standby");
    ports_.push_back(standby_->port());
    publishing_ = Must(
        PgCluster::StartStandby(*primary_, absl::StrCat("standby_", ++physical_slots_),
                                StandbySettings()),
        "start the publishing standby");
    publishing_port_ = publishing_->port();
    absl::Status s = CascadeUnderSpare();
    if (!s.ok()) harness::Die(std::string(s.message()));
  }
  std::vector<int> proxied = publishing_ ? std::vector<int>{publishing_port_} : ports_;
  for (int port : proxied) {
    proxies_.push_back(
        Must(harness::FaultProxy::Start(absl::StrCat("127.0.0.1:", port)),
             "start fault-proxy"));
  }
}

std::vector<std::string> Servers::StandbySettings() const {
  std::vector<std::string> s = settings_;
  s.push_back("hot_standby_feedback=on");
  return s;
}

std::string Servers::publisher_conninfo() const {
  std::vector<int> ports;
  for (const auto& p : proxies_) ports.push_back(p->port());
  return MultiHost(ports);
}

std::string Servers::direct_conninfo() const { return MultiHost(ports_); }

std::string Servers::slot_conninfo() const {
  return publishing_ ? MultiHost({publishing_port_}) : MultiHost(ports_);
}

std::vector<harness::FaultProxy*> Servers::proxies() const {
  std::vector<harness::FaultProxy*> out;
  for (const auto& p : proxies_) out.push_back(p.get());
  return out;
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
  if (topology_ == Topology::kFailoverSlots) {
    bool synced = harness::WaitFor(
        [&] {
          // Every failover slot of the primary (one per shard), each synchronized
          // and ready. Counting only the standby's slots let a failover go ahead
          // while the standby, rebuilt a moment before, held one shard's slot and
          // not yet the other's: that shard's publisher found its slot gone.
          absl::StatusOr<std::string> wanted = primary_->Value(
              "SELECT string_agg(slot_name, ',' ORDER BY slot_name) FROM "
              "pg_replication_slots WHERE slot_type = 'logical' AND failover");
          absl::StatusOr<std::string> ready = standby_->Value(
              "SELECT string_agg(slot_name, ',' ORDER BY slot_name) FROM "
              "pg_replication_slots WHERE slot_type = 'logical' AND synced AND NOT "
              "temporary");
          return wanted.ok() && ready.ok() && !wanted->empty() && *wanted == *ready;
        },
        absl::Seconds(120));
    if (!synced) {
      return absl::DeadlineExceededError("the standby never synchronized the slot");
    }
  }
  if (absl::Status s = primary_->Kill(); !s.ok()) return s;
  if (absl::Status s = standby_->Promote(); !s.ok()) return s;
  int old_port = primary_->port();
  primary_ = std::move(standby_);  // The old primary's directory is deleted here.
  ++failovers_;
  std::string slot = absl::StrCat("standby_", ++physical_slots_);
  absl::StatusOr<std::unique_ptr<PgCluster>> rebuilt = PgCluster::StartStandby(
      *primary_, slot, publishing_ ? StandbySettings() : settings_, old_port);
  if (!rebuilt.ok()) return rebuilt.status();
  standby_ = std::move(*rebuilt);
  if (publishing_) return CascadeUnderSpare();
  return SynchronizeWith(slot);
}

absl::Status Servers::RestartPublishingStandby() {
  if (!publishing_) return absl::FailedPreconditionError("no publishing standby");
  return publishing_->Restart("fast");
}

absl::Status Servers::LosePublishingStandby() {
  if (!publishing_) return absl::FailedPreconditionError("no publishing standby");
  if (absl::Status s = publishing_->Kill(); !s.ok()) return s;
  publishing_.reset();  // Its directory, and its slots, are deleted here.
  absl::StatusOr<std::unique_ptr<PgCluster>> rebuilt =
      PgCluster::StartStandby(*primary_, absl::StrCat("standby_", ++physical_slots_),
                              StandbySettings(), publishing_port_);
  if (!rebuilt.ok()) return rebuilt.status();
  publishing_ = std::move(*rebuilt);
  return CascadeUnderSpare();
}

absl::Status Servers::CascadeUnderSpare() {
  std::string slot = absl::StrCat("standby_", ++physical_slots_);
  absl::Status s = standby_
                       ->Exec(absl::StrCat("SELECT pg_create_physical_replication_slot('",
                                           slot, "', true)"))
                       .status();
  if (!s.ok()) return s;
  for (const std::string& sql :
       {absl::StrCat("ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=",
                     standby_->port(), " user=postgres dbname=postgres'"),
        absl::StrCat("ALTER SYSTEM SET primary_slot_name = '", slot, "'"),
        std::string("SELECT pg_reload_conf()")}) {
    if (absl::Status e = publishing_->Exec(sql).status(); !e.ok()) return e;
  }
  // Streaming from the spare, and the spare as far as the publishing standby: from
  // now on it only has what the spare has.
  bool cascaded = harness::WaitFor(
      [&] {
        absl::StatusOr<std::string> from = publishing_->Value(
            "SELECT sender_port::text FROM pg_stat_wal_receiver WHERE status = "
            "'streaming'");
        if (!from.ok() || *from != absl::StrCat(standby_->port())) return false;
        absl::StatusOr<std::string> ahead = standby_->Value(absl::StrCat(
            "SELECT (pg_last_wal_replay_lsn() >= '",
            publishing_->Value("SELECT pg_last_wal_replay_lsn()::text").value_or("0/0"),
            "')::text"));
        return ahead.ok() && *ahead == "true";
      },
      absl::Seconds(120));
  if (!cascaded) {
    return absl::DeadlineExceededError(
        "the publishing standby never cascaded under the spare");
  }
  // The physical slots of its earlier upstreams would keep WAL forever.
  for (PgCluster* upstream : {primary_.get(), standby_.get()}) {
    (void)upstream->Exec(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE "
        "slot_type = 'physical' AND NOT active");
  }
  return absl::OkStatus();
}

}  // namespace chaos

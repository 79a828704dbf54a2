// Servers: the PostgreSQL side of a chaos run. One primary; or, for the failover
// schedule, a primary and a physical standby that keeps a synchronized copy of the
// publisher's failover slot (PostgreSQL 17+), with synchronized_standby_slots set
// on the primary. The publishers reach each server through its own blackhole-proxy
// (the blackhole fault freezes them all) with a multi-host conninfo and
// target_session_attrs=read-write, so they follow a promotion by themselves; the
// harness's own clients use the same form without the proxies.
#ifndef TOOLS_CHAOS_SERVERS_H_
#define TOOLS_CHAOS_SERVERS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"

namespace chaos {

class Servers {
 public:
  // Starts the server(s) of release `version` (0: the harness's default) with
  // `settings`; with `standby`, a standby too. Dies on failure.
  Servers(int version, bool standby, std::vector<std::string> settings);

  harness::PgCluster& primary() { return *primary_; }
  std::string publisher_conninfo() const;  // Through the proxies.
  std::string direct_conninfo() const;     // Straight to the servers.

  absl::Status Freeze();  // Every publisher connection goes silent.
  absl::Status Thaw();

  // Waits until the standby holds a synchronized copy of the slot (a promotion
  // before would be a gap), kills the primary (-9), promotes the standby, and
  // rebuilds the old primary as the new primary's standby on the old port.
  absl::Status FailOver();
  int failovers() const { return failovers_; }

 private:
  absl::Status SynchronizeWith(const std::string& physical_slot);

  std::vector<std::string> settings_;
  std::unique_ptr<harness::PgCluster> primary_, standby_;
  std::vector<std::unique_ptr<harness::BlackholeProxy>> proxies_;
  std::vector<int> ports_;  // The servers' ports, in conninfo order; fixed.
  int failovers_ = 0;
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_SERVERS_H_

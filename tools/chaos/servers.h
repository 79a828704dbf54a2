// Servers: the PostgreSQL side of a chaos run. One primary; or, for the failover
// schedule, a primary and a physical standby that keeps a synchronized copy of the
// publisher's failover slot (PostgreSQL 17+), with synchronized_standby_slots set
// on the primary; or, for the standby schedule (publishing from a standby, 16+), a
// primary, a spare standby and, cascading from the spare, the standby the
// publishers decode on. Cascading keeps the publishing standby from ever holding
// WAL that the spare lacks, so it follows the spare's promotion.
//
// The publishers reach the servers that hold their slots through fault-proxies
// (the path faults of network.h act on them all): the primaries with a multi-host conninfo
// and target_session_attrs=read-write, so they follow a promotion by themselves, or
// the publishing standby, whose port survives its loss. The harness's own clients
// reach the primaries the same way without the proxies.
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
  enum class Topology { kPrimary, kFailoverSlots, kPublishingStandby };

  // Starts the servers of release `version` (0: the harness's default) with
  // `settings`. Dies on failure.
  Servers(int version, Topology topology, std::vector<std::string> settings);

  harness::PgCluster& primary() { return *primary_; }
  // Where the publishers' slots are: the primary, or the publishing standby.
  harness::PgCluster& slot_server() { return publishing_ ? *publishing_ : *primary_; }
  std::string publisher_conninfo() const;  // Through the proxies, to the slots.
  std::string direct_conninfo() const;     // Straight to the primaries.
  std::string slot_conninfo() const;       // Straight to the slots' server.

  // The fault-proxies between the publishers and their servers (network.h).
  std::vector<harness::FaultProxy*> proxies() const;

  // Kills the primary (-9), promotes the standby, and rebuilds the old primary as
  // the new primary's standby on the old port. With failover slots it first waits
  // until the standby holds a synchronized copy of the slot (a promotion before
  // would be a gap); with a publishing standby, that one follows the promotion,
  // and then moves under the rebuilt spare once the spare has caught up with it.
  absl::Status FailOver();
  int failovers() const { return failovers_; }

  // The publishing standby: restarted (fast); or lost (-9, its directory and
  // slots gone) and cloned anew from the primary on the same port, under the spare.
  absl::Status RestartPublishingStandby();
  absl::Status LosePublishingStandby();

 private:
  absl::Status SynchronizeWith(const std::string& physical_slot);
  // Points the publishing standby at the spare, through a physical slot there, and
  // waits until it streams from it and the spare has replayed as far.
  absl::Status CascadeUnderSpare();
  std::vector<std::string> StandbySettings() const;

  std::vector<std::string> settings_;
  Topology topology_;
  std::unique_ptr<harness::PgCluster> primary_, standby_;  // standby_: the spare.
  std::unique_ptr<harness::PgCluster> publishing_;         // kPublishingStandby.
  int publishing_port_ = 0;
  int physical_slots_ = 0;  // Names the physical slots made for standbys.
  std::vector<std::unique_ptr<harness::FaultProxy>> proxies_;
  std::vector<int> ports_;  // The servers' ports, in conninfo order; fixed.
  int failovers_ = 0;
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_SERVERS_H_

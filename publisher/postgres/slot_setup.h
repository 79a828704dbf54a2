// SlotSetup: makes the slot ready for a session to stream from, as PlanSlot
// (publisher/recovery/slot_plan.h) decides from the slot and the state table:
// stream from it, create it, or close a gap (re-publish from the outbox table, or
// skip it as told). On PostgreSQL 17+ the slot is a failover slot unless
// --failover-slot=false; an existing slot without failover is altered. A standby's
// slot cannot be a failover slot.
#ifndef PUBLISHER_POSTGRES_SLOT_SETUP_H_
#define PUBLISHER_POSTGRES_SLOT_SETUP_H_

#include "absl/status/status.h"
#include "cdc/postgres/replication_stream.h"
#include "common/log.h"
#include "publisher/delivery/sink.h"
#include "publisher/postgres/postgres_options.h"

namespace publisher {

// Where the slot is, and where its record is written: on a primary both are the
// replication connection's server. On a standby (PostgreSQL 16+) the slot is
// there and the record on the primary, through --pg-primary; without one the
// record is not kept.
struct SlotServers {
  bool standby = false;
  common::SqlConnection* primary = nullptr;  // Connected --pg-primary; null = none.
};

// On `stream`, before Start. `republish_sinks` makes the producer that
// re-publishes rows (at least once, whatever --delivery says); may be null when
// --on-slot-gap is not republish. `database` is current_database().
[[nodiscard]] absl::Status PrepareSlot(cdc::ReplicationStream& stream,
                                       const PgSessionOptions& options,
                                       const std::string& database, common::Logger& log,
                                       SinkFactory* republish_sinks,
                                       const SlotServers& servers = {});

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_SLOT_SETUP_H_

// PublishedHorizon: when the state table's horizon may move, so that a later gap
// re-publishes only the rows the old slot may not have confirmed. Pure: the slot
// watcher (publisher/postgres/slot_watcher.h) reads the server and writes the
// record; this class decides.
//
// A candidate is read in one statement: X = the xmin of a fresh snapshot and P =
// the WAL insert position after it (on a standby: its replay position after it).
// Every transaction with an id below X had ended when the snapshot was taken, so
// its commit record lies below P. Once the relay
// has confirmed P or more in the same replication session, every such transaction
// with outbox rows was acknowledged: X may be recorded. A candidate from another
// session (a reconnect, a failover: another server's WAL) is dropped.
#ifndef PUBLISHER_RECOVERY_HORIZON_H_
#define PUBLISHER_RECOVERY_HORIZON_H_

#include <cstdint>
#include <optional>

#include "cdc/lsn.h"

namespace publisher {

// What the relay reports: its replication session, how far it confirmed in it,
// and how many records the broker acknowledged so far (all sessions).
struct RelayProgress {
  uint64_t session = 0;
  cdc::Lsn confirmed;  // In this session.
  uint64_t acknowledged = 0;
};

class PublishedHorizon {
 public:
  // Whether a new candidate is wanted: none is pending.
  bool wants_candidate() const { return !candidate_.has_value(); }

  // A candidate read now, while the relay reports `progress`.
  void Offer(uint64_t xid, cdc::Lsn lsn, const RelayProgress& progress);

  // The horizon to record now, if the pending candidate is covered. A horizon is
  // recorded only when records were acknowledged since the last one, so an idle
  // publisher writes nothing (its own writes would otherwise feed it forever).
  // Call Recorded after a successful write.
  std::optional<uint64_t> Due(const RelayProgress& progress);
  void Recorded();

  // Forget the candidate (the watcher's connection was re-opened).
  void Drop() { candidate_.reset(); }

 private:
  struct Candidate {
    uint64_t xid;
    cdc::Lsn lsn;
    uint64_t session;
    uint64_t acknowledged;  // When offered.
  };
  std::optional<Candidate> candidate_;
  std::optional<uint64_t> due_;
  std::optional<uint64_t> recorded_acknowledged_;  // At the last recorded horizon.
};

}  // namespace publisher

#endif  // PUBLISHER_RECOVERY_HORIZON_H_

// The fault suite's verdicts, as pure functions over what the verifier consumed and
// what the sampler observed: no I/O, so each check has a unit test (audit_test.cc).
//
//   - early confirmations: the slot's confirmed_flush_lsn, sampled while the run
//     goes on, passed a row that the broker did not hold yet. Each sample reads the
//     LSN first and the partitions' high watermarks after it, so a row stored
//     before the confirmation has an offset below the watermark; a row with a lower
//     commit LSN whose first offset is at or above it was confirmed too early. This
//     catches what a PostgreSQL restart would hide by setting the slot back;
//   - per-partition order: within a partition, first deliveries follow commit
//     order (commit LSN, then the change's LSN);
//   - per-key order: per aggregate, first deliveries follow the writer's sequence,
//     and a key never moves to another partition.
// A row re-published from the outbox table after a gap (--on-slot-gap=republish)
// carries no WAL position (commit LSN 0): the first two checks cannot place it, so
// they judge the rows that do; per-key order and loss judge every row.
#ifndef TOOLS_CHAOS_AUDIT_H_
#define TOOLS_CHAOS_AUDIT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace chaos {

// One consumed record: the envelope's id and source, and where it landed.
struct Delivered {
  std::string id;
  int32_t partition = 0;
  int64_t offset = 0;
  uint64_t commit_lsn = 0;  // Envelope source.commit_lsn.
  uint64_t lsn = 0;         // Envelope source.lsn.
};

// The first delivery of each id (its lowest offset), from every delivery.
std::map<std::string, Delivered> FirstDeliveries(const std::vector<Delivered>& all);

// Whether `d` was re-published from the table (no WAL position).
inline bool Republished(const Delivered& d) { return d.commit_lsn == 0; }
// How many first deliveries were re-published from the table.
int64_t RepublishedFirst(const std::map<std::string, Delivered>& first);
// The duplicates that the WAL path made: per id, its deliveries that carry a WAL
// position, beyond one. Copies re-published from the table after a gap (at least
// once by design, whatever --delivery says) are not among them.
int64_t PositionedDuplicates(const std::vector<Delivered>& all);

struct ConfirmationSample {
  absl::Time at;
  uint64_t confirmed = 0;                      // confirmed_flush_lsn, read first.
  std::map<int32_t, int64_t> high_watermarks;  // Read after it, every partition.
};

// A committed row that never reached the broker, and its transaction's commit LSN
// (from the WAL: it has no envelope).
struct Missing {
  std::string id;
  uint64_t commit_lsn = 0;
};

struct EarlyConfirmation {
  ConfirmationSample sample;
  Delivered row;  // A row below the confirmed LSN that was not in the broker yet.
  bool never_delivered = false;  // `row` is a Missing one (partition, offset unset).
};

// The samples (in the order taken) that confirmed past a row the broker did not
// hold, each with one such row: a missing one if any (the lowest commit LSN), else
// the delivered one with the highest offset.
std::vector<EarlyConfirmation> FindEarlyConfirmations(
    const std::map<std::string, Delivered>& first, const std::vector<Missing>& missing,
    const std::vector<ConfirmationSample>& samples);

// First deliveries in a partition whose (commit_lsn, lsn) is below one delivered
// before them there. Up to 3 are described in `examples`.
int64_t PartitionOrderViolations(const std::map<std::string, Delivered>& first,
                                 std::vector<std::string>* examples);

// What the table says about a row: its aggregate and its number within it.
struct Committed {
  std::string aggregate;
  int64_t seq = 0;
};

// Per aggregate, first deliveries out of the writer's order, plus keys that moved
// partition. Ids absent from `history` are ignored. Up to 3 in `examples`.
int64_t KeyOrderViolations(const std::map<std::string, Delivered>& first,
                           const std::map<std::string, Committed>& history,
                           std::vector<std::string>* examples);

}  // namespace chaos

#endif  // TOOLS_CHAOS_AUDIT_H_

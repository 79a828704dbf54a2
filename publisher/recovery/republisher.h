// Republisher: publishes rows read from an outbox table (not from the WAL) and
// waits until the broker has acknowledged every one. It closes a gap
// (slot_plan.h): the session reads, in the new slot's starting snapshot, the rows
// the old slot may not have confirmed, and streams only once they are stored.
// Pure: the rows come through RowBatches (publisher/postgres/outbox_rows.h reads
// them with a cursor), the records go to a Sink.
//
// At least once: a re-published row may have been published before; it carries
// the same id, and consumers deduplicate on it. A row that cannot be mapped, or
// that the broker refuses, fails the re-publication (the state table still says
// "recovering", so the next start begins it again).
#ifndef PUBLISHER_RECOVERY_REPUBLISHER_H_
#define PUBLISHER_RECOVERY_REPUBLISHER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cdc/pgoutput.h"
#include "common/log.h"
#include "publisher/delivery/sink.h"
#include "publisher/mapping/mapper.h"

namespace publisher {

// Rows of one table, in text form and column order, a batch at a time.
class RowBatches {
 public:
  virtual ~RowBatches() = default;
  // The next batch; empty at the end.
  [[nodiscard]] virtual absl::StatusOr<std::vector<cdc::pgoutput::Tuple>> Next() = 0;
};

struct RepublishLimits {
  size_t max_in_flight = 20000;  // --max-in-flight
  // How long the broker may take to acknowledge everything produced.
  absl::Duration drain_timeout = absl::Minutes(5);
};

class Republisher {
 public:
  // Every argument must outlive the republisher.
  Republisher(Sink& sink, common::Logger& log, RepublishLimits limits)
      : sink_(sink), log_(log), limits_(limits) {}

  // Maps every row of `rows` with `relation` and produces it; `source` goes into
  // each envelope (the rows' commit positions are not known: zero). Returns once
  // all are acknowledged, or the first failure.
  [[nodiscard]] absl::Status Publish(RowBatches& rows, const BoundRelation& relation,
                                     const RowSource& source);
  // Waits for every outstanding acknowledgement.
  [[nodiscard]] absl::Status Drain();

  uint64_t published() const { return published_; }
  uint64_t acknowledged() const { return acknowledged_; }

 private:
  [[nodiscard]] absl::Status Produce(const OutboxRecord& record);
  // Serves delivery reports for up to `timeout`; the first failure is kept.
  void Poll(absl::Duration timeout);

  Sink& sink_;
  common::Logger& log_;
  RepublishLimits limits_;
  uint64_t published_ = 0;
  uint64_t acknowledged_ = 0;
  absl::Status failure_;
};

}  // namespace publisher

#endif  // PUBLISHER_RECOVERY_REPUBLISHER_H_

// MessageToken: what a sink carries for each record, from the relay's AckTracker
// to the record's delivery report and back.
#ifndef PUBLISHER_DELIVERY_MESSAGE_TOKEN_H_
#define PUBLISHER_DELIVERY_MESSAGE_TOKEN_H_

#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"

namespace publisher {

// Identifies one produced message in delivery reports.
struct MessageToken {
  uint64_t transaction;  // Sequence number of its transaction.
  size_t bytes;          // What it counts against the in-flight byte limit.
  // Its transaction's commit time, set by the relay, for the latency histogram.
  absl::Time committed = absl::InfinitePast();
};

}  // namespace publisher

#endif  // PUBLISHER_DELIVERY_MESSAGE_TOKEN_H_

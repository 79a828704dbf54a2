// Health: is the publisher doing its job right now? Pure: the caller passes the
// facts and the time. /healthz answers from this (docs/operations.md, "Monitoring"):
//   200 "ok"  while a replication session streams and acknowledgements progress;
//   503 with a one-line reason otherwise: not streaming (and why, when known),
//       the replication connection silent for --replication-timeout, or messages
//       in flight and none acknowledged for `stall` (30 s), naming librdkafka's
//       latest error when it came after the last acknowledgement.
#ifndef PUBLISHER_OPERATIONS_HEALTH_H_
#define PUBLISHER_OPERATIONS_HEALTH_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace publisher {

struct HealthInputs {
  bool streaming = false;
  std::string not_streaming_reason;  // What the supervisor is doing instead.
  uint64_t in_flight = 0;
  std::optional<absl::Time> oldest_unacked;  // Enqueue time of the oldest waiting.
  std::optional<absl::Time> last_ack;
  absl::Time last_heard = absl::InfinitePast();  // Last message from the server.
  absl::Duration replication_timeout;            // Zero: silence is not judged.
  std::string kafka_error;  // The latest error librdkafka reported, and when.
  absl::Time kafka_error_at = absl::InfinitePast();
};

struct HealthVerdict {
  bool ok = false;
  std::string reason;  // "ok", or why not.
};

inline constexpr absl::Duration kAckStall = absl::Seconds(30);

HealthVerdict JudgeHealth(const HealthInputs& in, absl::Time now,
                          absl::Duration stall = kAckStall);

}  // namespace publisher

#endif  // PUBLISHER_OPERATIONS_HEALTH_H_

// Health: is the publisher doing its job right now? Pure: the caller passes the
// facts and the time. Two verdicts (docs/operations.md, "Health endpoints"):
//
// JudgeHealth, /healthz: active and streaming.
//   200 "ok"  while a replication session streams and acknowledgements progress;
//   503 with a one-line reason otherwise: not streaming (and why, when known),
//       the replication connection silent for --replication-timeout, or messages
//       in flight and none acknowledged for `stall` (30 s), naming librdkafka's
//       latest error when it came after the last acknowledgement.
//
// JudgeReadiness, /readyz: this instance does its job. The active one as
// /healthz judges it; a standby (another instance streams the slot) while its
// last look at the slot, within kStandbyStale, found PostgreSQL and the brokers
// answering, so that it could take over. Anything else (starting, reconnecting,
// rewinding) is not ready.
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

// What a standby last found. `checked` is when; `problem` what keeps it from
// taking over ("" = nothing: PostgreSQL answered and so did the brokers).
struct StandbyInputs {
  bool standing_by = false;
  std::string problem;
  absl::Time checked = absl::InfinitePast();
};

// A standby that has not looked at the slot for this long is stuck, not ready: it
// looks every few seconds (SupervisorOptions::standby_retry), each look bounded by
// the connection's and the broker probe's timeouts.
inline constexpr absl::Duration kStandbyStale = absl::Minutes(1);

HealthVerdict JudgeReadiness(const HealthInputs& in, const StandbyInputs& standby,
                             absl::Time now, absl::Duration stall = kAckStall);

}  // namespace publisher

#endif  // PUBLISHER_OPERATIONS_HEALTH_H_

// JudgeHealth: streaming, and acknowledgements keep coming while work waits.
#include "publisher/operations/health.h"

#include "absl/strings/str_cat.h"

namespace publisher {

HealthVerdict JudgeHealth(const HealthInputs& in, absl::Time now, absl::Duration stall) {
  if (!in.streaming) {
    return {false, in.not_streaming_reason.empty()
                       ? "not streaming"
                       : absl::StrCat("not streaming: ", in.not_streaming_reason)};
  }
  if (in.replication_timeout > absl::ZeroDuration() &&
      now - in.last_heard >= in.replication_timeout) {
    return {false,
            absl::StrCat(
                "the replication connection has been silent for ",
                absl::FormatDuration(absl::Trunc(now - in.last_heard, absl::Seconds(1))),
                " (--replication-timeout ", absl::FormatDuration(in.replication_timeout),
                "): reconnecting")};
  }
  // Stalled: something has waited for `stall`, and nothing at all was acknowledged
  // in that time (a busy publisher acknowledges continuously even when its oldest
  // message is old; a publisher that just got work after a quiet hour has an old
  // last_ack but a young oldest message).
  bool waited =
      in.in_flight > 0 && in.oldest_unacked && now - *in.oldest_unacked >= stall;
  bool silent = !in.last_ack || now - *in.last_ack >= stall;
  if (waited && silent) {
    std::string reason =
        absl::StrCat(in.in_flight, " message(s) in flight and none acknowledged for ",
                     absl::FormatDuration(stall));
    if (!in.kafka_error.empty() && (!in.last_ack || in.kafka_error_at > *in.last_ack)) {
      absl::StrAppend(
          &reason, "; librdkafka reported ",
          absl::FormatDuration(absl::Trunc(now - in.kafka_error_at, absl::Seconds(1))),
          " ago: ", in.kafka_error);
    } else {
      absl::StrAppend(&reason, ": check the Kafka brokers and the stats log line");
    }
    return {false, reason};
  }
  return {true, "ok"};
}

HealthVerdict JudgeReadiness(const HealthInputs& in, const StandbyInputs& standby,
                             absl::Time now, absl::Duration stall) {
  if (in.streaming || !standby.standing_by) return JudgeHealth(in, now, stall);
  if (!standby.problem.empty()) {
    return {false, absl::StrCat("standing by, but could not take over: ", standby.problem)};
  }
  if (now - standby.checked >= kStandbyStale) {
    return {false,
            absl::StrCat("standing by, but the slot was last looked at ",
                         absl::FormatDuration(
                             absl::Trunc(now - standby.checked, absl::Seconds(1))),
                         " ago")};
  }
  return {true, "standing by: another publisher holds the slot; ready to take over"};
}

}  // namespace publisher

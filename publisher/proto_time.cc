// Timestamps: seconds and non-negative nanos, as google.protobuf.Timestamp requires.
#include "publisher/proto_time.h"

namespace publisher {

void SetTimestamp(google::protobuf::Timestamp* ts, absl::Time t) {
  int64_t micros = absl::ToUnixMicros(t);
  int64_t seconds = micros / 1000000;
  int64_t rem = micros % 1000000;
  if (rem < 0) {
    rem += 1000000;
    --seconds;
  }
  ts->set_seconds(seconds);
  ts->set_nanos(static_cast<int32_t>(rem * 1000));
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace publisher

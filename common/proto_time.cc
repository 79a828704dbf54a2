// Timestamps: seconds and non-negative nanos, as google.protobuf.Timestamp requires.
#include "common/proto_time.h"

#include "common/timestamp_parts.h"

namespace common {

void SetTimestamp(google::protobuf::Timestamp* ts, absl::Time t) {
  TimestampParts parts = SplitTimestamp(t);
  ts->set_seconds(parts.seconds);
  ts->set_nanos(parts.nanos);
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace common

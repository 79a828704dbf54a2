// Timestamps: seconds and non-negative nanos, as google.protobuf.Timestamp requires.
#include "publisher/mapping/proto_time.h"

#include "publisher/mapping/timestamp_parts.h"

namespace publisher {

void SetTimestamp(google::protobuf::Timestamp* ts, absl::Time t) {
  TimestampParts parts = SplitTimestamp(t);
  ts->set_seconds(parts.seconds);
  ts->set_nanos(parts.nanos);
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace publisher

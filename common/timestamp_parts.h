// google.protobuf.Timestamp's two parts for an absl::Time, to the microsecond
// (PostgreSQL's resolution): seconds, and nanos in [0, 1e9), so a time before 1970
// has negative seconds and positive nanos. Shared by the protobuf objects
// (proto_time.h) and the hand-written envelope (envelope_writer.h).
#ifndef COMMON_TIMESTAMP_PARTS_H_
#define COMMON_TIMESTAMP_PARTS_H_

#include <cstdint>

#include "absl/time/time.h"

namespace common {

struct TimestampParts {
  int64_t seconds = 0;
  int32_t nanos = 0;
};

inline TimestampParts SplitTimestamp(absl::Time t) {
  int64_t micros = absl::ToUnixMicros(t);
  int64_t seconds = micros / 1000000;
  int64_t rem = micros % 1000000;
  if (rem < 0) {
    rem += 1000000;
    --seconds;
  }
  return {seconds, static_cast<int32_t>(rem * 1000)};
}

}  // namespace common

#endif  // COMMON_TIMESTAMP_PARTS_H_

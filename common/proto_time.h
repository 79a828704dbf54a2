// absl::Time <-> google.protobuf.Timestamp, to the microsecond (PostgreSQL's
// resolution), for the envelope and the checkpoint.
#ifndef COMMON_PROTO_TIME_H_
#define COMMON_PROTO_TIME_H_

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"

namespace common {

void SetTimestamp(google::protobuf::Timestamp* ts, absl::Time t);
absl::Time FromTimestamp(const google::protobuf::Timestamp& ts);

}  // namespace common

#endif  // COMMON_PROTO_TIME_H_

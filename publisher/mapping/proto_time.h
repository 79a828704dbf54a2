// absl::Time <-> google.protobuf.Timestamp, to the microsecond (PostgreSQL's
// resolution), for the envelope and the checkpoint.
#ifndef PUBLISHER_MAPPING_PROTO_TIME_H_
#define PUBLISHER_MAPPING_PROTO_TIME_H_

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"

namespace publisher {

void SetTimestamp(google::protobuf::Timestamp* ts, absl::Time t);
absl::Time FromTimestamp(const google::protobuf::Timestamp& ts);

}  // namespace publisher

#endif  // PUBLISHER_MAPPING_PROTO_TIME_H_

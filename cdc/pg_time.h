// PostgreSQL timestamps on the wire: Int64 microseconds since 2000-01-01 00:00:00 UTC
// (the "PostgreSQL epoch"), used by pgoutput commit times and replication framing.
#ifndef CDC_PG_TIME_H_
#define CDC_PG_TIME_H_

#include <cstdint>

#include "absl/time/time.h"

namespace cdc {

// Seconds between the Unix epoch and the PostgreSQL epoch.
inline constexpr int64_t kPgEpochUnixSeconds = 946684800;

absl::Time FromPgTimestamp(int64_t pg_micros);
int64_t ToPgTimestamp(absl::Time t);

}  // namespace cdc

#endif  // CDC_PG_TIME_H_

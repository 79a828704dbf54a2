// Conversions between PostgreSQL wire timestamps and absl::Time.
#include "cdc/pg_time.h"

namespace cdc {

absl::Time FromPgTimestamp(int64_t pg_micros) {
  return absl::FromUnixSeconds(kPgEpochUnixSeconds) + absl::Microseconds(pg_micros);
}

int64_t ToPgTimestamp(absl::Time t) {
  return absl::ToInt64Microseconds(t - absl::FromUnixSeconds(kPgEpochUnixSeconds));
}

}  // namespace cdc

#include "cdc/stream_errors.h"

#include "absl/strings/match.h"

namespace cdc {

bool IsTransientStreamError(absl::string_view sqlstate, absl::string_view message) {
  if (sqlstate.empty() || absl::StartsWith(sqlstate, "08") ||
      absl::StartsWith(sqlstate, "57") || absl::StartsWith(sqlstate, "53") ||
      sqlstate == kObjectInUse)
    return true;
  // object_not_in_prerequisite_state and invalid_parameter_value: the failover-slot
  // wait's codes, and many others'.
  return (sqlstate == "55000" || sqlstate == "22023") &&
         absl::StrContains(message, "synchronized_standby_slots");
}

}  // namespace cdc

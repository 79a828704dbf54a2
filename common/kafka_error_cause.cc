// KafkaErrorCause: a summary never hides the cause of the same episode.
#include "common/kafka_error_cause.h"

#include <utility>

namespace common {

void KafkaErrorCause::Report(std::string error, absl::Time at, bool summary,
                             absl::Time stale_at) {
  bool kept_is_a_current_cause = !error_.empty() && !summary_ && at_ > stale_at;
  if (summary && kept_is_a_current_cause) return;
  error_ = std::move(error);
  at_ = at;
  summary_ = summary;
}

}  // namespace common

// Handler outcomes: the status codes that mean "try again".
#include "consumer/handler.h"

namespace consumer {

absl::Status RetryableError(absl::string_view message) {
  return absl::UnavailableError(message);
}

absl::Status PermanentError(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

bool IsRetryable(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kResourceExhausted:
      return true;
    default:
      return false;
  }
}

}  // namespace consumer

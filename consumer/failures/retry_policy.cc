// DecideRetry: retryable errors until attempts run out.
#include "consumer/failures/retry_policy.h"

#include "consumer/handler.h"

namespace consumer {

RetryDecision DecideRetry(const absl::Status& error, int attempts,
                          const RetryOptions& options) {
  RetryDecision d;
  if (!IsRetryable(error)) {
    d.dead_letter_reason = "permanent error";
  } else if (attempts >= options.max_attempts) {
    d.dead_letter_reason = "retries exhausted";
  } else {
    d.retry = true;
  }
  return d;
}

}  // namespace consumer

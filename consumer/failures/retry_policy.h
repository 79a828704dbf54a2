// RetryPolicy: what to do with a record whose handler failed. Pure.
//
// A retryable error (handler.h) is tried again after a backoff, up to
// max_attempts in all; a permanent one, or a retryable one out of attempts, goes
// to the dead-letter topic. Attempts that failed because the database itself was
// unreachable are not counted (OutboxConsumer): the record is not at fault, and
// nothing else could be applied meanwhile either.
#ifndef CONSUMER_FAILURES_RETRY_POLICY_H_
#define CONSUMER_FAILURES_RETRY_POLICY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace consumer {

struct RetryOptions {
  int max_attempts = 10;  // Handler calls, the first included.
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(30);
};

struct RetryDecision {
  bool retry = false;
  // Why the record is dead-lettered, for its headers ("" when retried).
  std::string dead_letter_reason;
};

// After `attempts` failed handler calls (>= 1), the last one failing with `error`.
RetryDecision DecideRetry(const absl::Status& error, int attempts,
                          const RetryOptions& options);

}  // namespace consumer

#endif  // CONSUMER_FAILURES_RETRY_POLICY_H_

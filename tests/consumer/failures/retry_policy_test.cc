// DecideRetry and the handler outcomes it reads.
#include "consumer/failures/retry_policy.h"

#include "consumer/handler.h"
#include "gtest/gtest.h"

namespace consumer {
namespace {

TEST(RetryPolicyTest, RetriesRetryableErrorsUntilAttemptsRunOut) {
  RetryOptions o;
  o.max_attempts = 3;
  EXPECT_TRUE(DecideRetry(RetryableError("x"), 1, o).retry);
  EXPECT_TRUE(DecideRetry(absl::AbortedError("serialization failure"), 2, o).retry);
  RetryDecision last = DecideRetry(RetryableError("x"), 3, o);
  EXPECT_FALSE(last.retry);
  EXPECT_EQ(last.dead_letter_reason, "retries exhausted");
}

TEST(RetryPolicyTest, DeadLettersOtherErrorsAtOnce) {
  RetryOptions o;
  for (const absl::Status& s : {PermanentError("x"), absl::FailedPreconditionError("x"),
                                absl::InternalError("x")}) {
    RetryDecision d = DecideRetry(s, 1, o);
    EXPECT_FALSE(d.retry) << s;
    EXPECT_EQ(d.dead_letter_reason, "permanent error");
  }
}

TEST(RetryPolicyTest, RetryableCodesAreThoseThatMeanTryAgain) {
  EXPECT_TRUE(IsRetryable(absl::UnavailableError("")));
  EXPECT_TRUE(IsRetryable(absl::DeadlineExceededError("")));
  EXPECT_TRUE(IsRetryable(absl::AbortedError("")));
  EXPECT_TRUE(IsRetryable(absl::ResourceExhaustedError("")));
  EXPECT_FALSE(IsRetryable(absl::InvalidArgumentError("")));
  EXPECT_FALSE(IsRetryable(absl::NotFoundError("")));
}

}  // namespace
}  // namespace consumer

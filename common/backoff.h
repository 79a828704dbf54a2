// Capped exponential backoff with jitter, for reconnecting: each failure doubles the
// wait up to a cap, and a random part of it spreads out publishers that lost the
// same server at the same moment. Pure: the caller sleeps.
#ifndef COMMON_BACKOFF_H_
#define COMMON_BACKOFF_H_

#include <cstdint>
#include <random>

#include "absl/time/time.h"

namespace common {

class Backoff {
 public:
  Backoff(absl::Duration initial, absl::Duration max,
          uint64_t seed = std::random_device{}())
      : initial_(initial), max_(max), rng_(seed) {}

  // The next wait: a uniformly random duration in [base/2, base], where base doubles
  // with each call from `initial` up to `max`.
  absl::Duration Next();
  // After a success: start again from `initial`.
  void Reset() { attempts_ = 0; }
  int attempts() const { return attempts_; }

 private:
  absl::Duration initial_, max_;
  std::mt19937_64 rng_;
  int attempts_ = 0;
};

}  // namespace common

#endif  // COMMON_BACKOFF_H_

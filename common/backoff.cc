// Backoff: equal-jitter exponential backoff.
#include "common/backoff.h"

#include <algorithm>

namespace common {

absl::Duration Backoff::Next() {
  absl::Duration base = initial_;
  for (int i = 0; i < attempts_ && base < max_; ++i) base *= 2;
  base = std::min(base, max_);
  ++attempts_;
  std::uniform_real_distribution<double> half(0.5, 1.0);
  return base * half(rng_);
}

}  // namespace common

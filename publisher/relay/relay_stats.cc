// The commit-to-acknowledgement histogram and the error kinds' names.
#include "publisher/relay/relay_stats.h"

#include <algorithm>

namespace publisher {

LatencyHistogram::LatencyHistogram()
    : bounds_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
               60}),
      counts_(bounds_.size() + 1, 0) {}

void LatencyHistogram::Observe(absl::Duration d) {
  double s = std::max(0.0, absl::ToDoubleSeconds(d));  // Clocks may disagree a little.
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), s) - bounds_.begin();
  ++counts_[i];
  sum_ += s;
  ++count_;
}

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kMapping:
      return "mapping";
    case ErrorKind::kProduce:
      return "produce";
    case ErrorKind::kDelivery:
      return "delivery";
    case ErrorKind::kDeadLetter:
      return "dead_letter";
  }
  return "unknown";
}

}  // namespace publisher

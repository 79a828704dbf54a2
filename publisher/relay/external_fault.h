// ExternalFault: a fault found outside the relay's thread (by the slot watcher)
// that must end the relay's run. Raised once, by any thread; read on every turn of
// the relay's loop, where a relaxed-cost atomic load is all it costs.
#ifndef PUBLISHER_RELAY_EXTERNAL_FAULT_H_
#define PUBLISHER_RELAY_EXTERNAL_FAULT_H_

#include <atomic>
#include <mutex>

#include "absl/status/status.h"

namespace publisher {

class ExternalFault {
 public:
  void Raise(absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = std::move(status);
    raised_.store(true, std::memory_order_release);
  }
  bool raised() const { return raised_.load(std::memory_order_acquire); }
  absl::Status status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  std::atomic<bool> raised_{false};
  mutable std::mutex mu_;
  absl::Status status_;
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_EXTERNAL_FAULT_H_

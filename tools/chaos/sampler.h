// ConfirmationSampler: samples, on its own thread while the fault suite runs, the
// slot's confirmed_flush_lsn and then the high watermark of every partition of the
// topic (audit.h explains why in that order). A sample whose reads failed (the
// server restarting, the broker down) is dropped and counted.
#ifndef TOOLS_CHAOS_SAMPLER_H_
#define TOOLS_CHAOS_SAMPLER_H_

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "common/kafka/handles.h"
#include "tools/chaos/audit.h"
#include "tools/harness/pg_cluster.h"

namespace chaos {

class ConfirmationSampler {
 public:
  // Starts sampling every `interval`, reading the slot over `pg` (a conninfo; a
  // multi-host one with target_session_attrs=read-write follows a promotion).
  ConfirmationSampler(std::string pg, std::string brokers, std::string topic,
                      int partitions, absl::Duration interval);
  ~ConfirmationSampler();  // Stops sampling.

  void Stop();
  std::vector<ConfirmationSample> samples();
  int dropped() const { return dropped_; }

 private:
  void Loop();
  bool Sample(ConfirmationSample* out);
  void Reconnect();  // A new Kafka handle.

  std::string pg_;
  std::string brokers_, topic_;
  int partitions_;
  absl::Duration interval_;
  common::KafkaClient rk_;  // For the watermark queries.
  std::unique_ptr<harness::PgSession> sql_;
  std::atomic<bool> stop_{false};
  std::atomic<int> dropped_{0};
  std::mutex mu_;
  std::vector<ConfirmationSample> samples_;
  std::thread thread_;
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_SAMPLER_H_

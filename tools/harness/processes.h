// Child processes for integration tests: mock-kafka driven over its stdin, the
// outbox-publisher binary, and a Kafka consumer reading concurrently. Each is
// stopped by its destructor; mock-kafka also exits by itself when the test process
// dies (its stdin closes).
#ifndef TOOLS_HARNESS_PROCESSES_H_
#define TOOLS_HARNESS_PROCESSES_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kafka/handles.h"

namespace harness {

// Path of a binary in the build directory (OUTBOX_BUILD_DIR).
std::string BuildPath(const std::string& name);

// A loopback TCP port nobody listens on right now, outside the ephemeral range
// (pg_cluster.sh free-port); -1 if none was found.
int FreeTcpPort();

// Polls `predicate` every 20 ms until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& predicate, absl::Duration timeout);

// A child driven over its stdin: it first prints `KEY=value` on stdout, then
// answers each command line with one line; it exits at end of stdin, so it dies
// with the test that started it. Stopped by the destructor.
class CommandProcess {
 public:
  static absl::StatusOr<std::unique_ptr<CommandProcess>> Start(
      const std::vector<std::string>& argv, const std::string& key);
  ~CommandProcess();
  const std::string& value() const { return value_; }  // Of the first line.
  // Sends one command line; returns its answer ("ok" or "error: ...").
  std::string Command(const std::string& line);

 private:
  CommandProcess() = default;
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
  std::string value_;
};

// mock-kafka (tools/harness/mock_kafka.cc).
class MockKafka {
 public:
  static absl::StatusOr<std::unique_ptr<MockKafka>> Start(int brokers = 1);
  const std::string& bootstrap() const { return process_->value(); }
  // Sends one command line; returns its answer ("ok" or "error: ...").
  std::string Command(const std::string& line) { return process_->Command(line); }

 private:
  explicit MockKafka(std::unique_ptr<CommandProcess> p) : process_(std::move(p)) {}
  std::unique_ptr<CommandProcess> process_;
};

// fault-proxy (tools/harness/fault_proxy.cc): forwards a loopback port to
// `target` (HOST:PORT) and, told to, makes the path misbehave: silent (its
// connections forward nothing either way and close nothing: a half-open
// connection, as a dropped NAT entry or a paused peer leaves it), slow, narrow, or
// breaking connections with an RST or a FIN.
class FaultProxy {
 public:
  static absl::StatusOr<std::unique_ptr<FaultProxy>> Start(const std::string& target);
  int port() const { return port_; }
  // Freezes every connection open now; later connections are forwarded.
  absl::Status Freeze();
  // Freezes every connection open now and every later one, until Thaw.
  absl::Status Blackhole();
  // Forwards the frozen connections again, and later ones.
  absl::Status Thaw();
  // Closes every connection (both sides see it end).
  absl::Status Cut();
  // Every connection, open now or later, until changed: each way, bytes wait
  // `latency` +- `jitter` before they are forwarded, and at most `bytes_per_second`
  // leave a second (0: unlimited).
  absl::Status Latency(absl::Duration latency, absl::Duration jitter = absl::ZeroDuration());
  absl::Status Bandwidth(int64_t bytes_per_second);
  absl::Status Clear();  // No latency, no bandwidth limit.
  // Every connection open now is reset (an RST to both sides) when it next
  // carries bytes, after half of them: a request cut off mid-way (within a second
  // anyway).
  absl::Status Reset();
  // Every connection open now is closed once it has forwarded `bytes` more bytes.
  absl::Status CutAfter(int64_t bytes);

 private:
  FaultProxy(std::unique_ptr<CommandProcess> p, int port)
      : process_(std::move(p)), port_(port) {}
  absl::Status Say(const std::string& command);
  std::unique_ptr<CommandProcess> process_;
  int port_;
};

// Makes SIGTERM and SIGINT kill (SIGKILL) every Process still running before
// this process dies of the signal, as it would have: a tool stopped by its
// operator (outbox-chaos, the benches) leaves no publisher or consumer behind.
// The clusters' watchdogs (pg_cluster.sh, kafka_cluster.sh) clean up the servers.
// Call once from main.
void KillChildrenOnStopSignal();

class Process {
 public:
  // Starts `argv` with stderr (and stdout) appended to `log_path`.
  static absl::StatusOr<std::unique_ptr<Process>> Start(
      const std::vector<std::string>& argv, const std::string& log_path);
  ~Process();  // SIGKILL if still running.
  void Signal(int sig);
  // Waits for exit; returns the exit code (128+signal if killed), or nullopt on timeout.
  std::optional<int> Wait(absl::Duration timeout);
  bool running();
  std::string Log() const;  // Everything it wrote so far.
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  std::optional<int> exit_code_;
};

struct ConsumedRecord {
  std::string topic;
  int32_t partition;
  int64_t offset;
  std::string key;
  std::string value;
  bool value_null = false;  // A null value (a tombstone), not an empty one.
  std::vector<std::pair<std::string, std::string>> headers;
  int64_t timestamp_ms;
  absl::Time received;  // When the consumer's poll returned it.
};

// Reads every partition of the given topics, on its own thread: from the
// beginning, or from `start_offsets[{topic, partition}]` where given. With
// `isolation_level` read_committed (librdkafka's default, as any ordinary consumer)
// a real broker hides aborted and open transactions; read_uncommitted shows them.
class Consumer {
 public:
  using Offsets = std::map<std::pair<std::string, int32_t>, int64_t>;
  static absl::StatusOr<std::unique_ptr<Consumer>> Start(
      const std::string& bootstrap, const std::vector<std::string>& topics,
      const Offsets& start_offsets = {},
      const std::string& isolation_level = "read_committed");
  ~Consumer();
  // In arrival order, from the `from`th record on: a caller that polls while
  // records arrive copies only the new ones.
  std::vector<ConsumedRecord> Records(size_t from = 0);
  size_t Count();

 private:
  Consumer() = default;
  void Loop();
  common::KafkaClient rk_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<ConsumedRecord> records_;
};

// Produces (key, value) records to `topic` and waits until every one is stored.
absl::Status ProduceAll(const std::string& bootstrap, const std::string& topic,
                        const std::vector<std::pair<std::string, std::string>>& records);

}  // namespace harness

#endif  // TOOLS_HARNESS_PROCESSES_H_

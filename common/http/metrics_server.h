// MetricsServer: the HTTP shell (cpp-httplib) both programs serve their numbers
// through, on a thread of its own:
//   GET /metrics  Prometheus text exposition format 0.0.4
//   GET /healthz  200 "ok", or 503 with a one-line reason: doing the work now
//   GET /readyz   200 with a one-line state, or 503 with why not: able to do its
//                 share (for the publisher, a healthy standby is ready too)
//   GET /livez    200 "ok" while the process serves: nothing a restart would cure
// It only calls the functions it is given, which must be safe to call from its
// thread (the publisher's Metrics and the consumer's take their own locks).
#ifndef COMMON_HTTP_METRICS_SERVER_H_
#define COMMON_HTTP_METRICS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"

namespace httplib {
class Server;
}

namespace common {

struct MetricsEndpoints {
  std::function<std::string()> metrics;  // The /metrics page.
  // /healthz: "" when healthy, else why not.
  std::function<std::string()> unhealthy_reason;
  // /readyz: {ready, the line to answer}. When empty, /readyz answers as /healthz.
  std::function<std::pair<bool, std::string>()> readiness;
};

class MetricsServer {
 public:
  // Binds `address`:`port` and starts serving. kFailedPrecondition when the
  // address cannot be bound (in use, not local, not permitted).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const std::string& address, int port, MetricsEndpoints endpoints);

  // Stops serving and joins the thread.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

 private:
  MetricsServer();

  MetricsEndpoints endpoints_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace common

#endif  // COMMON_HTTP_METRICS_SERVER_H_

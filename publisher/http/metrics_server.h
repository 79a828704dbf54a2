// MetricsServer: the HTTP shell over Metrics (cpp-httplib), on a thread of its own:
//   GET /metrics  Prometheus text exposition format 0.0.4
//   GET /healthz  200 "ok", or 503 with a one-line reason (publisher/operations/health.h)
// It only reads Metrics, which takes its own lock; it never touches the relay.
#ifndef PUBLISHER_HTTP_METRICS_SERVER_H_
#define PUBLISHER_HTTP_METRICS_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "publisher/operations/metrics.h"

namespace httplib {
class Server;
}

namespace publisher {

class MetricsServer {
 public:
  // Binds `address`:`port` and starts serving. kFailedPrecondition when the
  // address cannot be bound (in use, not local, not permitted). `metrics` must
  // outlive the server.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const std::string& address, int port, const Metrics& metrics);

  // Stops serving and joins the thread.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

 private:
  MetricsServer();

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace publisher

#endif  // PUBLISHER_HTTP_METRICS_SERVER_H_

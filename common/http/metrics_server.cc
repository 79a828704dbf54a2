// MetricsServer: routes, binding and the serving thread.
#include "common/http/metrics_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include "absl/strings/str_cat.h"

namespace common {

MetricsServer::MetricsServer() : server_(std::make_unique<httplib::Server>()) {}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& address, int port, MetricsEndpoints endpoints) {
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->endpoints_ = std::move(endpoints);
  const MetricsEndpoints& serve = s->endpoints_;
  httplib::Server& http = *s->server_;
  // Scrapes are rare and cheap: one worker instead of httplib's pool of eight.
  http.new_task_queue = [] { return new httplib::ThreadPool(1); };
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let a
  // second publisher bind the same port and answer half of the scrapes.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http.set_read_timeout(5);
  http.set_write_timeout(5);
  http.Get("/metrics", [&serve](const httplib::Request&, httplib::Response& res) {
    res.set_content(serve.metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  auto health = [&serve]() -> std::pair<bool, std::string> {
    std::string reason = serve.unhealthy_reason();
    if (reason.empty()) return {true, "ok"};
    return {false, reason};
  };
  auto answer = [](httplib::Response& res, std::pair<bool, std::string> verdict) {
    res.status = verdict.first ? 200 : 503;
    res.set_content(verdict.second + "\n", "text/plain; charset=utf-8");
  };
  http.Get("/healthz", [health, answer](const httplib::Request&, httplib::Response& res) {
    answer(res, health());
  });
  http.Get("/readyz",
           [&serve, health, answer](const httplib::Request&, httplib::Response& res) {
             answer(res, serve.readiness ? serve.readiness() : health());
           });
  http.Get("/livez", [answer](const httplib::Request&, httplib::Response& res) {
    answer(res, {true, "ok"});
  });
  if (!http.bind_to_port(address, port)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot serve metrics on ", address, ":", port,
        ": the address is in use or not local; choose another --metrics-port or "
        "--metrics-address"));
  }
  s->thread_ = std::thread([&http] { http.listen_after_bind(); });
  return s;
}

MetricsServer::~MetricsServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace common

// A plain HTTP GET on loopback, for tests of the publisher's /metrics and /healthz.
#ifndef TOOLS_HARNESS_HTTP_GET_H_
#define TOOLS_HARNESS_HTTP_GET_H_

#include <string>
#include <utility>

namespace harness {

// GET http://127.0.0.1:`port``path` with 5 s timeouts: {status, body}, or {-1, ""}
// when nothing answered.
std::pair<int, std::string> HttpGet(int port, const std::string& path);

}  // namespace harness

#endif  // TOOLS_HARNESS_HTTP_GET_H_

#include "tools/harness/http_get.h"

#include <httplib.h>

namespace harness {

std::pair<int, std::string> HttpGet(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  auto res = client.Get(path);
  if (!res) return {-1, ""};
  return {res->status, res->body};
}

}  // namespace harness

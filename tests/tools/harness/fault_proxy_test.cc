// fault-proxy's faults take effect, measured from both ends of the path: an echo
// server behind the proxy, a client in front. The chaos suite and the tests rely
// on these: a latency that is not added, or a reset that arrives as a FIN, would
// make a fault run prove less than it says.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tools/harness/processes.h"

namespace harness {
namespace {

// What one connection's server side saw.
struct Seen {
  std::string bytes;
  int error = 0;  // errno of the read that ended it; 0 for an orderly end (a FIN).
  bool ended = false;
};

// Echoes every byte back on each accepted connection, and records what it saw.
class EchoServer {
 public:
  EchoServer() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(listener_, 8);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~EchoServer() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  int port() const { return port_; }
  // What the connection accepted `i`th saw, once it has ended (within 10 s; else
  // what it saw so far).
  Seen Ended(size_t i) {
    Seen seen;
    for (absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (i < seen_.size()) seen = seen_[i];
      }
      if (seen.ended) break;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return seen;
  }

 private:
  void Run() {
    std::vector<int> fds;
    while (!stop_) {
      std::vector<pollfd> p = {{listener_, POLLIN, 0}};
      for (int fd : fds) p.push_back({fd, POLLIN, 0});
      poll(p.data(), p.size(), 50);
      if (p[0].revents & POLLIN) {
        fds.push_back(accept(listener_, nullptr, nullptr));
        std::lock_guard<std::mutex> lock(mu_);
        seen_.emplace_back();
      }
      for (size_t i = 1; i < p.size(); ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)) || fds[i - 1] < 0) continue;
        char buf[65536];
        ssize_t n = read(fds[i - 1], buf, sizeof(buf));
        std::lock_guard<std::mutex> lock(mu_);
        Seen& s = seen_[i - 1];
        int error = n < 0 ? errno : 0;
        if (n > 0) {
          s.bytes.append(buf, static_cast<size_t>(n));
          ssize_t w = 0;
          for (ssize_t sent = 0; sent < n && w >= 0; sent += w)
            w = write(fds[i - 1], buf + sent, static_cast<size_t>(n - sent));
          if (w >= 0) continue;
          error = errno;  // An RST may show here first (and not again on reading).
        }
        s.error = error;
        s.ended = true;
        close(fds[i - 1]);
        fds[i - 1] = -1;
      }
    }
    for (int fd : fds)
      if (fd >= 0) close(fd);
  }

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<Seen> seen_;
};

int ConnectTo(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval tv{30, 0};  // No test waits longer for a byte.
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// Sends `bytes` and reads as many back. The time it took, or an error's errno
// (0: the connection ended in an orderly way) with what came back.
struct Trip {
  absl::Duration took;
  int error = -1;  // -1: every byte came back.
  std::string back;
};
Trip RoundTrip(int fd, const std::string& bytes) {
  Trip t;
  absl::Time start = absl::Now();
  // A sending thread, so a large payload does not wait on its own echo.
  std::thread sender([&] {
    for (size_t sent = 0; sent < bytes.size();) {
      ssize_t w = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (w <= 0) return;
      sent += static_cast<size_t>(w);
    }
  });
  char buf[65536];
  while (t.back.size() < bytes.size()) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      t.error = n < 0 ? errno : 0;
      break;
    }
    t.back.append(buf, static_cast<size_t>(n));
  }
  t.took = absl::Now() - start;
  sender.join();
  return t;
}

class FaultProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = FaultProxy::Start(absl::StrCat("127.0.0.1:", echo_.port()));
    ASSERT_TRUE(p.ok()) << p.status();
    proxy_ = *std::move(p);
    fd_ = ConnectTo(proxy_->port());
    ASSERT_EQ(RoundTrip(fd_, "hello").error, -1);  // The path works.
  }
  void TearDown() override { close(fd_); }

  EchoServer echo_;
  std::unique_ptr<FaultProxy> proxy_;
  int fd_ = -1;
};

TEST_F(FaultProxyTest, LatencyDelaysEachWayByItsAmountAndJitterVariesIt) {
  absl::Duration plain = RoundTrip(fd_, "x").took;
  ASSERT_TRUE(proxy_->Latency(absl::Milliseconds(150)).ok());
  // Each way waits 150 ms: a round trip takes 300 ms at least.
  for (int i = 0; i < 3; ++i) {
    Trip t = RoundTrip(fd_, "x");
    ASSERT_EQ(t.error, -1);
    EXPECT_GE(t.took, absl::Milliseconds(300)) << "plain round trip: " << plain;
    EXPECT_LT(t.took, absl::Seconds(5));
  }
  // 100 +- 50 ms each way: trips between 100 and 300 ms, and not all alike.
  ASSERT_TRUE(proxy_->Latency(absl::Milliseconds(100), absl::Milliseconds(50)).ok());
  absl::Duration shortest = absl::InfiniteDuration(), longest;
  for (int i = 0; i < 12; ++i) {
    Trip t = RoundTrip(fd_, "x");
    ASSERT_EQ(t.error, -1);
    shortest = std::min(shortest, t.took);
    longest = std::max(longest, t.took);
  }
  EXPECT_GE(shortest, absl::Milliseconds(100));
  EXPECT_GT(longest - shortest, absl::Milliseconds(10)) << "jitter varies the delay";
  // A new connection is as slow: the latency is the path's.
  int fresh = ConnectTo(proxy_->port());
  EXPECT_GE(RoundTrip(fresh, "x").took, absl::Milliseconds(100));
  close(fresh);
  ASSERT_TRUE(proxy_->Clear().ok());
  EXPECT_LT(RoundTrip(fd_, "x").took, absl::Milliseconds(250));
}

TEST_F(FaultProxyTest, BandwidthCapsTheBytesASecond) {
  const std::string payload(600 * 1000, 'b');
  ASSERT_TRUE(proxy_->Bandwidth(200 * 1000).ok());
  // 600 kB at 200 kB/s each way (the echo's way pipelined with the other): 3 s.
  Trip narrow = RoundTrip(fd_, payload);
  ASSERT_EQ(narrow.error, -1);
  EXPECT_EQ(narrow.back, payload) << "nothing lost or reordered";
  EXPECT_GE(narrow.took, absl::Milliseconds(2700));
  EXPECT_LT(narrow.took, absl::Seconds(20));
  ASSERT_TRUE(proxy_->Clear().ok());
  EXPECT_LT(RoundTrip(fd_, payload).took, absl::Milliseconds(1500));
}

TEST_F(FaultProxyTest, ResetCutsARequestMidWayWithAnRstToBothSides) {
  ASSERT_TRUE(proxy_->Reset().ok());
  const std::string request(1000, 'r');
  Trip t = RoundTrip(fd_, request);
  EXPECT_EQ(t.error, ECONNRESET) << "the client sees an RST, not a FIN";
  int fresh = ConnectTo(proxy_->port());
  EXPECT_EQ(RoundTrip(fresh, "y").back, "y") << "connections opened after the reset work";
  close(fresh);
  // The server got part of the request ("hello" came before), then the RST.
  Seen server = echo_.Ended(0);
  ASSERT_TRUE(server.ended);
  EXPECT_EQ(server.error, ECONNRESET);
  ASSERT_TRUE(absl::StartsWith(server.bytes, "hello"));
  EXPECT_GT(server.bytes.size(), 5u) << "the request began";
  EXPECT_LT(server.bytes.size(), 5 + request.size()) << "and never ended";
}

TEST_F(FaultProxyTest, ResetReachesAnIdleConnectionWithinASecond) {
  ASSERT_TRUE(proxy_->Reset().ok());
  absl::Time start = absl::Now();
  char c;
  ssize_t n = recv(fd_, &c, 1, 0);
  EXPECT_EQ(n, -1);
  EXPECT_EQ(errno, ECONNRESET);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(FaultProxyTest, CutAfterForwardsThatManyBytesThenEndsBothSides) {
  ASSERT_TRUE(proxy_->CutAfter(100).ok());
  Trip t = RoundTrip(fd_, std::string(300, 'c'));
  // Ended: a FIN, or an RST where the proxy's socket held bytes unread (the
  // server's echo), as the kernel closes such a socket.
  EXPECT_TRUE(t.error == 0 || t.error == ECONNRESET) << t.error;
  EXPECT_EQ(t.back, "") << "the 100 bytes went to the server; nothing came back";
  Seen server = echo_.Ended(0);
  ASSERT_TRUE(server.ended);
  EXPECT_EQ(server.bytes, "hello" + std::string(100, 'c')) << "not a byte more";
}

TEST_F(FaultProxyTest, FreezeHoldsBytesAndThawDeliversThem) {
  ASSERT_TRUE(proxy_->Freeze().ok());
  ASSERT_EQ(send(fd_, "held", 4, 0), 4);
  pollfd p{fd_, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 1000), 0) << "nothing moves while frozen";
  ASSERT_TRUE(proxy_->Thaw().ok());
  char buf[4];
  ASSERT_EQ(recv(fd_, buf, sizeof(buf), MSG_WAITALL), 4);
  EXPECT_EQ(std::string(buf, 4), "held");
}

}  // namespace
}  // namespace harness

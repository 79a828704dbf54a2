// fault-proxy: a TCP proxy that makes a network path misbehave, for the tests and
// the fault-injection suite. It forwards a loopback port to HOST:PORT and, told
// to, makes the path silent (a black hole), slow, narrow, or cut off in the
// middle of a request.
//
//   fault-proxy HOST:PORT
//
// Prints "port=N" (the port it listens on, loopback) as its first line on stdout,
// then takes one command per line on stdin and answers "ok" or "error: <why>".
// Silence, as a NAT or firewall that dropped its state, or a paused peer, leaves a
// connection: neither side sees a FIN or an RST (kill -STOP of the server is not
// the same: its kernel still answers):
//   freeze      every connection open now forwards nothing from now on, and
//               closes nothing; connections accepted later are forwarded
//   blackhole   freeze, and every connection accepted from now on is frozen too
//               (a path that stays dead, though a TCP handshake with the proxy
//               still succeeds)
//   thaw        frozen connections forward again, and new ones are forwarded
// A slow or narrow path, for every connection, open now or later, until changed:
//   latency MS [JITTER]  each way, bytes wait MS +- JITTER milliseconds before
//               they are forwarded (in order; "latency 0" ends it)
//   bandwidth B each way of each connection forwards at most B bytes a second
//               ("bandwidth 0" ends it)
//   clear       latency 0 and bandwidth 0
// A path that breaks connections:
//   reset       every connection open now is reset (an RST to both sides) when it
//               next carries bytes, after forwarding half of them: a request or a
//               response cut off mid-way; one that carries nothing for a second is
//               reset then
//   cut-after N every connection open now is closed once it has forwarded N more
//               bytes, both ways together (a FIN, or an RST to a side whose bytes
//               the proxy had not read yet, as the kernel closes such a socket)
//   cut         close every connection now
//   count       answers the number of open connections
// Bytes a connection took in are never dropped while it lives: a frozen, slow or
// narrow connection holds them (up to 1 MiB each way, then it stops reading, and
// TCP's flow control holds the sender). It exits at end of stdin, so it dies with
// the process that started it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;

constexpr size_t kMaxHeld = 1 << 20;  // Per direction, before reading stops.

// The path's shape, for every connection.
struct Shape {
  microseconds latency{0}, jitter{0};
  int64_t bytes_per_second = 0;  // 0: unlimited.
};

// Bytes read at one time, forwarded from `release` on.
struct Chunk {
  Clock::time_point release;
  std::string bytes;
  size_t sent = 0;
};

// One direction of a connection: bytes read from `from` wait in `held` until
// written to `to`.
struct Pipe {
  int from = -1, to = -1;
  std::deque<Chunk> held;
  size_t held_bytes = 0;
  bool eof = false;
  Clock::time_point last_release{};  // Chunks leave in the order they came.
  double tokens = 0;                 // Bytes it may send now (bandwidth).
  Clock::time_point refilled = Clock::now();

  bool CanRead() const { return held_bytes < kMaxHeld && !eof; }
  // When it can write next (time_point::max() for nothing to write).
  Clock::time_point NextWrite(const Shape& shape) const {
    if (held.empty()) return Clock::time_point::max();
    Clock::time_point at = held.front().release;
    if (shape.bytes_per_second > 0 && tokens < 1) {
      auto wait = microseconds(
          static_cast<int64_t>((1 - tokens) * 1e6 / shape.bytes_per_second) + 1);
      at = std::max(at, refilled + wait);
    }
    return at;
  }
  void Refill(const Shape& shape, Clock::time_point now) {
    if (shape.bytes_per_second <= 0) return;
    double elapsed = std::chrono::duration<double>(now - refilled).count();
    // At most a twentieth of a second's bytes at once: a steady rate, not bursts.
    double burst = std::max(1024.0, shape.bytes_per_second / 20.0);
    tokens =
        std::min(burst, tokens + elapsed * static_cast<double>(shape.bytes_per_second));
    refilled = now;
  }
};

struct Connection {
  Pipe up, down;  // client -> server, server -> client
  bool frozen = false;
  bool closed = false;
  int64_t cut_after = -1;  // Bytes to forward before closing; -1: no limit.
  bool reset_armed = false;
  Clock::time_point reset_by{};

  void Close() {
    if (closed) return;
    close(up.from);
    close(up.to);
    closed = true;
  }
  // An RST to both sides: closing with a zero linger time discards what is unsent.
  void Reset() {
    if (closed) return;
    linger l{1, 0};
    setsockopt(up.from, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    setsockopt(up.to, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    Close();
  }
};

int Connect(const std::string& host, const std::string& port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return -1;
  int fd = socket(res->ai_family, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

void NonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

class Proxy {
 public:
  Proxy(std::string host, std::string port)
      : host_(std::move(host)), port_(std::move(port)) {}

  // Answers one command line.
  std::string Command(const std::string& line) {
    std::istringstream in(line);
    std::string verb;
    in >> verb;
    int64_t a = 0, b = 0;
    if (verb == "freeze" || verb == "blackhole") {
      for (auto& c : conns_) c->frozen = true;
      freeze_new_ = verb == "blackhole";
    } else if (verb == "thaw") {
      for (auto& c : conns_) c->frozen = false;
      freeze_new_ = false;
    } else if (verb == "latency" && (in >> a) && a >= 0) {
      if (!(in >> b)) b = 0;
      if (b < 0 || b > a) return "error: latency takes MS [JITTER], 0 <= JITTER <= MS";
      shape_.latency = std::chrono::milliseconds(a);
      shape_.jitter = std::chrono::milliseconds(b);
    } else if (verb == "bandwidth" && (in >> a) && a >= 0) {
      shape_.bytes_per_second = a;
    } else if (verb == "clear") {
      shape_ = Shape{};
    } else if (verb == "reset") {
      for (auto& c : conns_) {
        c->reset_armed = true;
        c->reset_by = Clock::now() + std::chrono::seconds(1);
      }
    } else if (verb == "cut-after" && (in >> a) && a >= 0) {
      for (auto& c : conns_) c->cut_after = a;
    } else if (verb == "cut") {
      for (auto& c : conns_) c->Close();
    } else if (verb == "count") {
      size_t open = 0;
      for (auto& c : conns_) open += !c->closed;
      return std::to_string(open);
    } else {
      return "error: unknown or malformed command: " + line;
    }
    return "ok";
  }

  void Accept(int listener) {
    int client = accept(listener, nullptr, nullptr);
    if (client < 0) return;
    int server = Connect(host_, port_);
    if (server < 0) {
      close(client);
      return;
    }
    NonBlocking(client);
    NonBlocking(server);
    auto c = std::make_unique<Connection>();
    c->up.from = c->down.to = client;
    c->up.to = c->down.from = server;
    c->frozen = freeze_new_;
    conns_.push_back(std::move(c));
  }

  // The connections to poll, with their events: a pipe reads while it holds less
  // than kMaxHeld and writes when its next bytes are due.
  void Poll(std::vector<pollfd>& fds, std::vector<Connection*>& polled,
            Clock::time_point& wake) {
    Forget();
    Clock::time_point now = Clock::now();
    for (auto& c : conns_) {
      if (c->frozen) continue;
      for (Pipe* p : {&c->up, &c->down}) p->Refill(shape_, now);
      Clock::time_point up_at = c->up.NextWrite(shape_),
                        down_at = c->down.NextWrite(shape_);
      wake = std::min({wake, up_at, down_at});
      if (c->reset_armed) wake = std::min(wake, c->reset_by);
      // The client's socket: read for up, written for down; the server's the reverse.
      short client = static_cast<short>((c->up.CanRead() ? POLLIN : 0) |
                                        (down_at <= now ? POLLOUT : 0));
      short server = static_cast<short>((c->down.CanRead() ? POLLIN : 0) |
                                        (up_at <= now ? POLLOUT : 0));
      polled.push_back(c.get());
      fds.push_back({c->up.from, client, 0});
      fds.push_back({c->up.to, server, 0});
    }
  }

  void Serve(Connection& c, short client_events, short server_events) {
    if (c.reset_armed && Clock::now() >= c.reset_by) return c.Reset();
    bool up = Read(c, c.up, client_events) && Write(c, c.up);
    bool down = !c.closed && Read(c, c.down, server_events) && Write(c, c.down);
    if (c.closed) return;
    if (!up || !down) c.Close();
  }

 private:
  // False when the connection is over (or was reset).
  bool Read(Connection& c, Pipe& p, short revents) {
    if (!(revents & (POLLIN | POLLHUP | POLLERR)) || !p.CanRead()) return true;
    char buf[65536];
    ssize_t n = read(p.from, buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      p.eof = true;
      return !p.held.empty();
    }
    if (n < 0) return true;
    if (c.reset_armed) {
      // Half of what came, then the RST: the peer has part of a message.
      (void)!write(p.to, buf, static_cast<size_t>(n) / 2);
      c.Reset();
      return false;
    }
    Clock::time_point release = Clock::now() + Delay();
    release = std::max(release, p.last_release);
    p.last_release = release;
    p.held.push_back({release, std::string(buf, static_cast<size_t>(n)), 0});
    p.held_bytes += static_cast<size_t>(n);
    return true;
  }

  // Writes what is due; false when the connection is over.
  bool Write(Connection& c, Pipe& p) {
    Clock::time_point now = Clock::now();
    while (!p.held.empty() && p.held.front().release <= now) {
      Chunk& chunk = p.held.front();
      size_t n = chunk.bytes.size() - chunk.sent;
      if (shape_.bytes_per_second > 0) {
        if (p.tokens < 1) break;
        n = std::min(n, static_cast<size_t>(p.tokens));
      }
      if (c.cut_after >= 0) n = std::min(n, static_cast<size_t>(c.cut_after));
      ssize_t w = n == 0 ? 0 : write(p.to, chunk.bytes.data() + chunk.sent, n);
      if (w < 0) return errno == EAGAIN || errno == EINTR;
      chunk.sent += static_cast<size_t>(w);
      p.held_bytes -= static_cast<size_t>(w);
      if (shape_.bytes_per_second > 0) p.tokens -= static_cast<double>(w);
      if (c.cut_after >= 0 && (c.cut_after -= w) == 0) return false;
      if (chunk.sent == chunk.bytes.size()) p.held.pop_front();
      if (static_cast<size_t>(w) < n) break;  // The socket's buffer is full.
    }
    return !(p.eof && p.held.empty());
  }

  microseconds Delay() {
    if (shape_.jitter.count() == 0) return shape_.latency;
    std::uniform_int_distribution<int64_t> d(-shape_.jitter.count(),
                                             shape_.jitter.count());
    return shape_.latency + microseconds(d(rng_));
  }

  // Drops the connections that are over.
  void Forget() {
    conns_.erase(
        std::remove_if(conns_.begin(), conns_.end(),
                       [](const std::unique_ptr<Connection>& c) { return c->closed; }),
        conns_.end());
  }

  std::string host_, port_;
  std::vector<std::unique_ptr<Connection>> conns_;
  bool freeze_new_ = false;  // Since "blackhole", until "thaw".
  Shape shape_;
  std::mt19937_64 rng_{std::random_device{}()};
};

int Listen(sockaddr_in& addr) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 64) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return -1;
  }
  NonBlocking(listener);
  return listener;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc != 2 || std::strchr(argv[1], ':') == nullptr) {
    std::cerr << "usage: fault-proxy HOST:PORT\n";
    return 2;
  }
  std::string target = argv[1];
  Proxy proxy(target.substr(0, target.rfind(':')), target.substr(target.rfind(':') + 1));
  sockaddr_in addr{};
  int listener = Listen(addr);
  if (listener < 0) {
    std::cerr << "fault-proxy: cannot listen: " << std::strerror(errno) << "\n";
    return 1;
  }
  std::cout << "port=" << ntohs(addr.sin_port) << std::endl;

  std::string command;
  while (true) {
    std::vector<pollfd> fds = {{0, POLLIN, 0}, {listener, POLLIN, 0}};
    std::vector<Connection*> polled;
    Clock::time_point now = Clock::now(), wake = now + std::chrono::seconds(1);
    proxy.Poll(fds, polled, wake);
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now);
    // Rounded up, so a wake-up is never early (a 0 ms timeout would spin).
    int ms = static_cast<int>(std::clamp<int64_t>(timeout.count() + 1, 0, 1000));
    if (poll(fds.data(), fds.size(), ms) < 0 && errno != EINTR) return 1;

    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char buf[256];
      ssize_t n = read(0, buf, sizeof(buf));
      if (n <= 0) return 0;  // End of stdin: the test is gone.
      command.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = command.find('\n')) != std::string::npos;) {
        std::cout << proxy.Command(command.substr(0, nl)) << std::endl;
        command.erase(0, nl + 1);
      }
    }
    if (fds[1].revents & POLLIN) proxy.Accept(listener);
    for (size_t i = 0; i < polled.size(); ++i)
      proxy.Serve(*polled[i], fds[2 + 2 * i].revents, fds[3 + 2 * i].revents);
  }
}

// blackhole-proxy: a TCP proxy for tests of silent connections. It
// forwards a loopback port to HOST:PORT until told to freeze its connections;
// frozen, it forwards nothing either way and closes nothing, as a NAT or firewall
// that dropped its state, or a paused peer, leaves a connection: neither side
// sees a FIN or an RST. (kill -STOP of the server is not the same: its kernel
// still answers.)
//
//   blackhole-proxy HOST:PORT
//
// Prints "port=N" (the port it listens on, loopback) as its first line on stdout,
// then takes one command per line on stdin and answers "ok" or "error: <why>":
//   freeze   every connection open now forwards nothing from now on; connections
//            accepted later are forwarded
//   blackhole  freeze, and every connection accepted from now on is frozen too
//            (a path that stays dead, though a TCP handshake with the proxy
//            still succeeds)
//   thaw     frozen connections forward again, and new ones are forwarded
//   cut      close every connection
//   count    answers the number of open connections
// It exits at end of stdin, so it dies with the process that started it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

// One direction of a connection: bytes read from `from` wait in `pending` until
// written to `to`.
struct Pipe {
  int from = -1, to = -1;
  std::string pending;
  bool eof = false;
};

struct Connection {
  Pipe up, down;  // client -> server, server -> client
  bool frozen = false;
  bool closed = false;
  void Close() {
    if (closed) return;
    close(up.from);
    close(up.to);
    closed = true;
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

// Moves what `p.from` has into `p.to` (non-blocking: what does not fit waits).
// False when the connection is over.
bool Pump(Pipe& p, short revents_from) {
  if ((revents_from & (POLLIN | POLLHUP | POLLERR)) && p.pending.size() < (1 << 20)) {
    char buf[65536];
    ssize_t n = read(p.from, buf, sizeof(buf));
    if (n > 0) {
      p.pending.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      p.eof = true;
    }
  }
  if (!p.pending.empty()) {
    ssize_t n = write(p.to, p.pending.data(), p.pending.size());
    if (n > 0) {
      p.pending.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return false;
    }
  }
  return !(p.eof && p.pending.empty());
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc != 2 || std::strchr(argv[1], ':') == nullptr) {
    std::cerr << "usage: blackhole-proxy HOST:PORT\n";
    return 2;
  }
  std::string target = argv[1];
  std::string host = target.substr(0, target.rfind(':'));
  std::string port = target.substr(target.rfind(':') + 1);

  int listener = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 64) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::cerr << "blackhole-proxy: cannot listen: " << std::strerror(errno) << "\n";
    return 1;
  }
  NonBlocking(listener);
  std::cout << "port=" << ntohs(addr.sin_port) << std::endl;

  std::vector<std::unique_ptr<Connection>> conns;
  bool freeze_new = false;  // Since "blackhole", until "thaw".
  std::string command;
  while (true) {
    std::vector<pollfd> fds = {{0, POLLIN, 0}, {listener, POLLIN, 0}};
    std::vector<Connection*> polled;
    for (auto& c : conns) {
      if (c->closed || c->frozen) continue;
      polled.push_back(c.get());
      fds.push_back({c->up.from,
                     static_cast<short>(POLLIN | (c->down.pending.empty() ? 0 : POLLOUT)),
                     0});
      fds.push_back({c->up.to,
                     static_cast<short>(POLLIN | (c->up.pending.empty() ? 0 : POLLOUT)),
                     0});
    }
    if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) return 1;

    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char buf[256];
      ssize_t n = read(0, buf, sizeof(buf));
      if (n <= 0) return 0;  // End of stdin: the test is gone.
      command.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = command.find('\n')) != std::string::npos;) {
        std::string line = command.substr(0, nl);
        command.erase(0, nl + 1);
        size_t open = 0;
        for (auto& c : conns) open += !c->closed;
        if (line == "freeze" || line == "blackhole") {
          for (auto& c : conns) c->frozen = true;
          freeze_new = line == "blackhole";
          std::cout << "ok" << std::endl;
        } else if (line == "thaw") {
          for (auto& c : conns) c->frozen = false;
          freeze_new = false;
          std::cout << "ok" << std::endl;
        } else if (line == "cut") {
          for (auto& c : conns) c->Close();
          std::cout << "ok" << std::endl;
        } else if (line == "count") {
          std::cout << open << std::endl;
        } else {
          std::cout << "error: unknown command " << line << std::endl;
        }
      }
    }
    if (fds[1].revents & POLLIN) {
      int client = accept(listener, nullptr, nullptr);
      if (client >= 0) {
        int server = Connect(host, port);
        if (server < 0) {
          close(client);
        } else {
          NonBlocking(client);
          NonBlocking(server);
          auto c = std::make_unique<Connection>();
          c->up.from = client;
          c->up.to = server;
          c->down.from = server;
          c->down.to = client;
          c->frozen = freeze_new;
          conns.push_back(std::move(c));
        }
      }
    }
    for (size_t i = 0; i < polled.size(); ++i) {
      Connection* c = polled[i];
      short client_events = fds[2 + 2 * i].revents;
      short server_events = fds[3 + 2 * i].revents;
      bool up = Pump(c->up, client_events);
      bool down = Pump(c->down, server_events);
      if (!up || !down) c->Close();
    }
  }
}

// bench-raw-reader: the benchmark's "limit" contender. A minimal libpq logical
// replication client that streams a pgoutput slot and discards every CopyData
// message, until it has received the Commit whose end LSN reaches END (or a
// keepalive reports the server has sent that far). What it costs is the walsender's
// speed, not ours: the publisher is measured against it.
//
//   bench-raw-reader CONNINFO SLOT PUBLICATION END_LSN [NAP_US]
//
// Without NAP_US it blocks in libpq for every message. With it, when nothing is
// buffered it sleeps NAP_US microseconds before reading again: on a small machine
// a reader that wakes for every segment slows the walsender down (it takes the CPU
// the walsender needs), so the napping reader is often the faster one, and the
// benchmark takes the faster of the two as the limit.
//
// It answers keepalives that ask for a reply (flush 0/0: it confirms nothing, so the
// slot stays where it was). Wire formats: PostgreSQL documentation, "Streaming
// Replication Protocol" (XLogData 'w', Primary keepalive 'k', Standby status 'r')
// and "Logical Replication Message Formats" (Commit 'C').
#include <libpq-fe.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

uint64_t ReadBE64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void WriteBE64(char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
}

bool ParseLsn(const char* s, uint64_t* out) {
  unsigned hi = 0, lo = 0;
  if (std::sscanf(s, "%X/%X", &hi, &lo) != 2) return false;
  *out = (static_cast<uint64_t>(hi) << 32) | lo;
  return true;
}

int Fail(PGconn* conn, const char* what) {
  std::fprintf(stderr, "bench-raw-reader: %s: %s\n", what,
               conn ? PQerrorMessage(conn) : "");
  if (conn) PQfinish(conn);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr,
                 "usage: bench-raw-reader CONNINFO SLOT PUBLICATION END_LSN [NAP_US]\n");
    return 2;
  }
  useconds_t nap = argc == 6 ? static_cast<useconds_t>(std::atoi(argv[5])) : 0;
  uint64_t end = 0;
  if (!ParseLsn(argv[4], &end)) return Fail(nullptr, "bad END_LSN");
  std::string conninfo = std::string(argv[1]) + " replication=database";
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) return Fail(conn, "connect");
  std::string start = std::string("START_REPLICATION SLOT \"") + argv[2] +
                      "\" LOGICAL 0/0 (proto_version '1', publication_names '" + argv[3] +
                      "')";
  PGresult* res = PQexec(conn, start.c_str());
  if (PQresultStatus(res) != PGRES_COPY_BOTH) {
    PQclear(res);
    return Fail(conn, "START_REPLICATION");
  }
  PQclear(res);
  uint64_t messages = 0, bytes = 0;
  for (;;) {
    char* buf = nullptr;
    int n = PQgetCopyData(conn, &buf, /*async=*/nap > 0 ? 1 : 0);
    if (n == 0) {  // Only when napping: nothing buffered yet.
      usleep(nap);
      if (PQconsumeInput(conn) == 0) return Fail(conn, "read");
      continue;
    }
    if (n < 0) return Fail(conn, "stream ended before END_LSN");
    ++messages;
    bytes += static_cast<uint64_t>(n);
    bool done = false;
    if (buf[0] == 'w' && n > 25 && buf[25] == 'C' && n >= 25 + 18) {
      // XLogData header (1 + 8 + 8 + 8), then Commit: flags, commit_lsn, end_lsn.
      done = ReadBE64(buf + 25 + 10) >= end;
    } else if (buf[0] == 'k' && n >= 18) {
      done = ReadBE64(buf + 1) >= end;
      if (!done && buf[17]) {
        char reply[34] = {'r'};  // write, flush, apply = 0, clock = 0, no reply.
        WriteBE64(reply + 1, 0);
        if (PQputCopyData(conn, reply, sizeof(reply)) != 1 || PQflush(conn) != 0)
          return Fail(conn, "status update");
      }
    }
    PQfreemem(buf);
    if (done) break;
  }
  std::printf("messages=%llu bytes=%llu\n", static_cast<unsigned long long>(messages),
              static_cast<unsigned long long>(bytes));
  PQfinish(conn);
  return 0;
}

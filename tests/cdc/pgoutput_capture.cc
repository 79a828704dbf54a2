// pgoutput-capture: records the raw pgoutput messages a real server sends, one per
// line as "<MessageName> <hex bytes>", for the golden fixtures in fixtures/ (see
// fixtures/capture.sh, which also holds the SQL that produced them).
//
//   pgoutput-capture CONNINFO SLOT PUBLICATIONS PROTO_VERSION UNTIL_LSN OUT [OPTION...]
//   OPTION: messages | streaming | binary
//
// Streams from the slot until the server reports WAL up to UNTIL_LSN as sent and no
// transaction is open, then confirms what it read and stops.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "cdc/pgoutput.h"
#include "cdc/replication_stream.h"

namespace {

int Fail(const absl::Status& s) {
  std::cerr << "pgoutput-capture: " << s << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::cerr << "usage: pgoutput-capture CONNINFO SLOT PUBLICATIONS PROTO UNTIL_LSN OUT "
                 "[messages|streaming|binary...]\n";
    return 2;
  }
  cdc::StartOptions start;
  start.slot = argv[2];
  start.publications = absl::StrSplit(argv[3], ',');
  start.proto_version = std::stoi(argv[4]);
  absl::StatusOr<cdc::Lsn> until = cdc::Lsn::Parse(argv[5]);
  if (!until.ok()) return Fail(until.status());
  for (int i = 7; i < argc; ++i) {
    std::string opt = argv[i];
    start.messages |= opt == "messages";
    start.streaming |= opt == "streaming";
    start.binary |= opt == "binary";
  }

  auto stream = cdc::ReplicationStream::Connect(argv[1]);
  if (!stream.ok()) return Fail(stream.status());
  if (absl::Status s = (*stream)->Start(start); !s.ok()) return Fail(s);

  std::ofstream out(argv[6]);
  cdc::pgoutput::StreamDecoder decoder;
  bool in_transaction = false;
  cdc::Lsn last_end;
  absl::Time give_up = absl::Now() + absl::Minutes(2);
  while (absl::Now() < give_up) {
    auto m = (*stream)->Read(absl::Now() + absl::Milliseconds(200));
    if (!m.ok()) return Fail(m.status());
    if (!m->has_value()) {
      // Ask for a keepalive: it tells how far the server has sent.
      if (absl::Status s = (*stream)->SendStatus(last_end, true); !s.ok()) return Fail(s);
      continue;
    }
    if (auto* k = std::get_if<cdc::Keepalive>(&**m)) {
      if (k->wal_end >= *until && !in_transaction && !decoder.in_stream_block()) break;
      continue;
    }
    const auto& x = std::get<cdc::XLogData>(**m);
    auto msg = decoder.Decode(x.payload);
    if (!msg.ok()) return Fail(msg.status());
    if (std::holds_alternative<cdc::pgoutput::Begin>(*msg)) in_transaction = true;
    if (auto* c = std::get_if<cdc::pgoutput::Commit>(&*msg)) {
      in_transaction = false;
      last_end = c->end_lsn;
    }
    if (auto* c = std::get_if<cdc::pgoutput::StreamCommit>(&*msg)) last_end = c->end_lsn;
    out << cdc::pgoutput::MessageName(*msg) << " " << absl::BytesToHexString(x.payload) << "\n";
  }
  if (absl::Now() >= give_up) return Fail(absl::DeadlineExceededError("never caught up"));
  if (absl::Status s = (*stream)->SendStatus(last_end); !s.ok()) return Fail(s);
  if (absl::Status s = (*stream)->Stop(absl::Now() + absl::Seconds(10)); !s.ok()) return Fail(s);
  return out.good() ? 0 : 1;
}

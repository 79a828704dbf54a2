// pgoutput-capture: records the raw pgoutput messages a real server sends, one per
// line as "<MessageName> <hex bytes>", for the golden fixtures in fixtures/ (see
// fixtures/capture.sh, which also holds the SQL that produced them).
//
//   pgoutput-capture CONNINFO SLOT PUBLICATIONS PROTO_VERSION UNTIL_LSN OUT [OPTION...]
//   OPTION: messages | streaming | binary
//
// Streams from the slot until the server reports WAL up to UNTIL_LSN as sent and no
// transaction is open (tests/cdc/catch_up.h), confirming as it goes, then stops.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "cdc/pgoutput.h"
#include "cdc/postgres/replication_stream.h"
#include "tests/cdc/catch_up.h"

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
  absl::Status s = cdc::CatchUp(
      **stream, *until, absl::Now() + absl::Minutes(2),
      [&](const cdc::XLogData& frame, const cdc::pgoutput::PgOutputMessage& message) {
        out << cdc::pgoutput::MessageName(message) << " "
            << absl::BytesToHexString(frame.payload) << "\n";
      });
  if (!s.ok()) return Fail(s);
  if (s = (*stream)->Stop(absl::Now() + absl::Seconds(10)); !s.ok()) return Fail(s);
  return out.good() ? 0 : 1;
}

// CatchUp: the read loop shared by the fixture recorder and the integration tests.
#include "tests/cdc/catch_up.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace cdc {

absl::Status CatchUp(ReplicationStream& stream, Lsn until, absl::Time deadline,
                     const MessageCallback& on_message, bool confirm) {
  pgoutput::StreamDecoder decoder;
  bool in_transaction = false;
  Lsn confirmable;
  while (absl::Now() < deadline) {
    ASSIGN_OR_RETURN(
        std::optional<ServerMessage> m,
        stream.Read(std::min(deadline, absl::Now() + absl::Milliseconds(200))));
    if (!m.has_value()) {
      // Quiet: ask the server where it is; it answers with a keepalive.
      RETURN_IF_ERROR(stream.SendStatus(confirm ? confirmable : Lsn(), true));
      continue;
    }
    if (const auto* k = std::get_if<Keepalive>(&*m)) {
      if (k->wal_end >= until && !in_transaction && !decoder.in_stream_block()) {
        return confirm ? stream.SendStatus(confirmable, false) : absl::OkStatus();
      }
      continue;
    }
    const auto& frame = std::get<XLogData>(*m);
    ASSIGN_OR_RETURN(pgoutput::PgOutputMessage message, decoder.Decode(frame.payload));
    if (std::holds_alternative<pgoutput::Begin>(message)) in_transaction = true;
    if (const auto* c = std::get_if<pgoutput::Commit>(&message)) {
      in_transaction = false;
      confirmable = c->end_lsn;
    }
    if (const auto* c = std::get_if<pgoutput::StreamCommit>(&message))
      confirmable = c->end_lsn;
    on_message(frame, message);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("stream did not reach ", until.ToString()));
}

}  // namespace cdc

// Test support: drain a replication stream until the server has sent everything up
// to a WAL position, handing each decoded message to a callback.
#ifndef TESTS_CDC_CATCH_UP_H_
#define TESTS_CDC_CATCH_UP_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cdc/framing.h"
#include "cdc/lsn.h"
#include "cdc/pgoutput.h"
#include "cdc/postgres/replication_stream.h"

namespace cdc {

using MessageCallback =
    std::function<void(const XLogData& frame, const pgoutput::PgOutputMessage& message)>;

// Reads until a keepalive reports WAL sent up to `until` while no transaction or
// stream block is open, asking for keepalives whenever the stream goes quiet.
// Confirms each commit's end LSN as it goes when `confirm` is set. Fails past
// `deadline` or on any stream or decode error.
absl::Status CatchUp(ReplicationStream& stream, Lsn until, absl::Time deadline,
                     const MessageCallback& on_message, bool confirm = true);

}  // namespace cdc

#endif  // TESTS_CDC_CATCH_UP_H_

// WalStream: what the relay needs of a replication connection. Pure: the libpq
// implementation is ReplicationStream (cdc/postgres/replication_stream.h); tests script a
// fault-injecting fake.
#ifndef CDC_WAL_STREAM_H_
#define CDC_WAL_STREAM_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cdc/framing.h"
#include "cdc/lsn.h"

namespace cdc {

// The part of a replication connection the relay uses, so that tests can run it
// against a scripted, fault-injecting fake.
class WalStream {
 public:
  virtual ~WalStream() = default;
  // See ReplicationStream::Read (cdc/postgres/replication_stream.h, the libpq one).
  [[nodiscard]] virtual absl::StatusOr<std::optional<ServerMessage>> Read(
      absl::Time deadline) = 0;
  // See ReplicationStream::SendStatus.
  [[nodiscard]] virtual absl::Status SendStatus(Lsn flush, bool reply_requested) = 0;
  // See ReplicationStream::Stop.
  [[nodiscard]] virtual absl::Status Stop(absl::Time deadline) = 0;
};

}  // namespace cdc

#endif  // CDC_WAL_STREAM_H_

// Streaming replication framing: the CopyData messages of START_REPLICATION, per the
// PostgreSQL docs "Streaming Replication Protocol" and walsender.c.
//
//   server -> client   'w' XLogData:   Int64 dataStart, Int64 walEnd, Int64 sendTime,
//                                      Byte[n] one pgoutput message
//                      'k' keepalive:  Int64 walEnd, Int64 sendTime, Byte1 replyRequested
//   client -> server   'r' standby status update: Int64 write, Int64 flush, Int64 apply,
//                                      Int64 sendTime, Byte1 replyRequested
//
// Each Parse* has its Build* twin, so a fake server in tests speaks the same bytes.
#ifndef CDC_FRAMING_H_
#define CDC_FRAMING_H_

#include <cstdint>
#include <string>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cdc/lsn.h"

namespace cdc {

// 'w'. `data_start` is 0 for messages that are not the last write of a decoding
// callback (Begin, Relation, ...): never order or confirm by it.
struct XLogData {
  Lsn data_start;
  Lsn wal_end;
  int64_t send_time;  // PostgreSQL-epoch microseconds.
  // One pgoutput message. Points into the parsed buffer, which must outlive it.
  absl::string_view payload;
  bool operator==(const XLogData&) const = default;
};

// 'k'. `wal_end` is the walsender's sentPtr: it may lie inside a transaction the
// server has not sent yet, so it is confirmable only when nothing received is pending.
struct Keepalive {
  Lsn wal_end;
  int64_t send_time;
  bool reply_requested;
  bool operator==(const Keepalive&) const = default;
};

// 'r'. For a logical slot only `flush` moves confirmed_flush_lsn.
struct StandbyStatus {
  Lsn write;
  Lsn flush;
  Lsn apply;
  int64_t send_time;
  bool reply_requested;  // Asks the server to answer with a keepalive now.
  bool operator==(const StandbyStatus&) const = default;
};

using ServerMessage = std::variant<XLogData, Keepalive>;

// Parses one CopyData payload sent by the walsender. kDataLoss on malformed bytes.
[[nodiscard]] absl::StatusOr<ServerMessage> ParseServerMessage(absl::string_view bytes);
std::string BuildXLogData(const XLogData& m);
std::string BuildKeepalive(const Keepalive& m);

std::string BuildStandbyStatus(const StandbyStatus& m);
[[nodiscard]] absl::StatusOr<StandbyStatus> ParseStandbyStatus(absl::string_view bytes);

}  // namespace cdc

#endif  // CDC_FRAMING_H_

// Streaming replication CopyData framing: readers and writers in matching pairs.
#include "cdc/framing.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cdc/byte_reader.h"
#include "cdc/byte_writer.h"
#include "common/status_macros.h"

namespace cdc {
namespace {

// Read the XLogData header; the rest of the message is its payload.
absl::StatusOr<XLogData> ReadXLogData(ByteReader& in) {
  XLogData m;
  ASSIGN_OR_RETURN(m.data_start, in.ReadLsn());
  ASSIGN_OR_RETURN(m.wal_end, in.ReadLsn());
  ASSIGN_OR_RETURN(m.send_time, in.ReadI64());
  m.payload = in.ReadRest();
  return m;
}

// Read a primary keepalive message.
absl::StatusOr<Keepalive> ReadKeepalive(ByteReader& in) {
  Keepalive m;
  ASSIGN_OR_RETURN(m.wal_end, in.ReadLsn());
  ASSIGN_OR_RETURN(m.send_time, in.ReadI64());
  ASSIGN_OR_RETURN(uint8_t reply, in.ReadU8());
  m.reply_requested = reply != 0;
  RETURN_IF_ERROR(in.ExpectEnd());
  return m;
}

absl::Status Annotate(const absl::Status& s, absl::string_view what) {
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

}  // namespace

absl::StatusOr<ServerMessage> ParseServerMessage(absl::string_view bytes) {
  ByteReader in(bytes);
  ASSIGN_OR_RETURN(uint8_t tag, in.ReadU8());
  if (tag == 'w') {
    absl::StatusOr<XLogData> m = ReadXLogData(in);
    if (!m.ok()) return Annotate(m.status(), "XLogData");
    return *m;
  }
  if (tag == 'k') {
    absl::StatusOr<Keepalive> m = ReadKeepalive(in);
    if (!m.ok()) return Annotate(m.status(), "primary keepalive");
    return *m;
  }
  return absl::DataLossError(
      absl::StrFormat("unknown replication CopyData message type 0x%02x", tag));
}

std::string BuildXLogData(const XLogData& m) {
  ByteWriter out;
  out.U8('w').BE64(m.data_start.value()).BE64(m.wal_end.value());
  out.BE64(static_cast<uint64_t>(m.send_time)).Bytes(m.payload);
  return out.Take();
}

std::string BuildKeepalive(const Keepalive& m) {
  ByteWriter out;
  out.U8('k').BE64(m.wal_end.value()).BE64(static_cast<uint64_t>(m.send_time));
  out.U8(m.reply_requested ? 1 : 0);
  return out.Take();
}

std::string BuildStandbyStatus(const StandbyStatus& m) {
  ByteWriter out;
  out.U8('r').BE64(m.write.value()).BE64(m.flush.value()).BE64(m.apply.value());
  out.BE64(static_cast<uint64_t>(m.send_time)).U8(m.reply_requested ? 1 : 0);
  return out.Take();
}

absl::StatusOr<StandbyStatus> ParseStandbyStatus(absl::string_view bytes) {
  ByteReader in(bytes);
  ASSIGN_OR_RETURN(uint8_t tag, in.ReadU8());
  if (tag != 'r') {
    return absl::DataLossError(
        absl::StrFormat("standby status update: expected type 'r', got 0x%02x", tag));
  }
  StandbyStatus m;
  absl::Status s = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(m.write, in.ReadLsn());
    ASSIGN_OR_RETURN(m.flush, in.ReadLsn());
    ASSIGN_OR_RETURN(m.apply, in.ReadLsn());
    ASSIGN_OR_RETURN(m.send_time, in.ReadI64());
    ASSIGN_OR_RETURN(uint8_t reply, in.ReadU8());
    m.reply_requested = reply != 0;
    return in.ExpectEnd();
  }();
  if (!s.ok()) return Annotate(s, "standby status update");
  return m;
}

}  // namespace cdc

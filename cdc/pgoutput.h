// Decoding of pgoutput, PostgreSQL's logical replication output plugin.
//
// Each XLogData message of a logical replication stream carries exactly one pgoutput
// message. This file defines them as plain structs and decodes them from bytes, with
// no I/O: see the PostgreSQL docs "Logical Replication Message Formats" and
// src/backend/replication/logical/proto.c, whose write functions are the other half
// of every reader here (cdc/pgoutput_encoder.h is ours).
//
// Protocol versions 1 (PostgreSQL 10+) and 2 (14+: streaming of large in-progress
// transactions) are supported. Decoded messages own their bytes.
#ifndef CDC_PGOUTPUT_H_
#define CDC_PGOUTPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cdc/lsn.h"

namespace cdc::pgoutput {

// 'B': a transaction begins. Sent only for transactions with published changes.
struct Begin {
  Lsn final_lsn;        // LSN of the commit record.
  int64_t commit_time;  // PostgreSQL-epoch microseconds (cdc/pg_time.h).
  uint32_t xid;
  bool operator==(const Begin&) const = default;
};

// 'C': a transaction commits. `end_lsn` is the only LSN it is safe to confirm for it.
struct Commit {
  uint8_t flags;  // Currently always 0.
  Lsn commit_lsn;
  Lsn end_lsn;  // End of the commit record: where the next transaction may start.
  int64_t commit_time;
  bool operator==(const Commit&) const = default;
};

// 'O': the transaction was replayed from another node (replication origin).
struct Origin {
  Lsn commit_lsn;  // Commit LSN on the origin server.
  std::string name;
  bool operator==(const Origin&) const = default;
};

struct Column {
  uint8_t flags;  // 1 = part of the replica identity key.
  std::string name;
  uint32_t type_oid;
  int32_t type_modifier;
  bool operator==(const Column&) const = default;
};

// 'R': a table's shape. Precedes its first change in a session and follows every
// schema change: a receiver must replace, not merge, what it knew of the relation.
struct Relation {
  std::optional<uint32_t> xid;  // Only inside a streamed transaction block (v2).
  uint32_t oid;
  std::string schema;  // Empty for pg_catalog.
  std::string name;
  uint8_t replica_identity;  // 'd' default, 'n' nothing, 'f' full, 'i' index.
  std::vector<Column> columns;
  bool operator==(const Relation&) const = default;
};

// 'Y': a non-built-in data type used by a following Relation.
struct Type {
  std::optional<uint32_t> xid;
  uint32_t oid;
  std::string schema;
  std::string name;
  bool operator==(const Type&) const = default;
};

// One column value of a TupleData.
struct Value {
  enum class Kind : char {
    kNull = 'n',
    kUnchangedToast = 'u',  // Only in UPDATE new tuples: value not sent, unchanged.
    kText = 't',
    kBinary = 'b',  // Only with the `binary` option: the type's send format.
  };
  Kind kind;
  std::string data;  // Empty for kNull and kUnchangedToast.
  bool operator==(const Value&) const = default;
};
using Tuple = std::vector<Value>;

// 'I': a row was inserted. INSERT tuples always carry every column.
struct Insert {
  std::optional<uint32_t> xid;
  uint32_t relation_oid;
  Tuple new_tuple;
  bool operator==(const Insert&) const = default;
};

// 'U': a row was updated. The old tuple is present when the key changed ('K', key
// columns only) or the table has REPLICA IDENTITY FULL ('O', every column).
struct Update {
  std::optional<uint32_t> xid;
  uint32_t relation_oid;
  char old_kind = 0;  // 0 (no old tuple), 'K' or 'O'.
  Tuple old_tuple;
  Tuple new_tuple;
  bool operator==(const Update&) const = default;
};

// 'D': a row was deleted; the old tuple is its key ('K') or the whole row ('O').
struct Delete {
  std::optional<uint32_t> xid;
  uint32_t relation_oid;
  char old_kind;  // 'K' or 'O'.
  Tuple old_tuple;
  bool operator==(const Delete&) const = default;
};

// 'T': tables were truncated.
struct Truncate {
  static constexpr uint8_t kCascade = 1;
  static constexpr uint8_t kRestartIdentity = 2;
  std::optional<uint32_t> xid;
  uint8_t options;
  std::vector<uint32_t> relation_oids;
  bool operator==(const Truncate&) const = default;
};

// 'M': pg_logical_emit_message(), sent with the `messages` option.
struct Message {
  static constexpr uint8_t kTransactional = 1;
  std::optional<uint32_t> xid;
  uint8_t flags;
  Lsn lsn;
  std::string prefix;
  std::string content;
  bool operator==(const Message&) const = default;
};

// 'S': a block of a large in-progress transaction follows (protocol 2).
struct StreamStart {
  uint32_t xid;
  uint8_t first_segment;  // 1 for the transaction's first block.
  bool operator==(const StreamStart&) const = default;
};

// 'E': the current streamed block ends.
struct StreamStop {
  bool operator==(const StreamStop&) const = default;
};

// 'c': a streamed transaction commits; its changes were all sent in earlier blocks.
struct StreamCommit {
  uint32_t xid;
  uint8_t flags;
  Lsn commit_lsn;
  Lsn end_lsn;
  int64_t commit_time;
  bool operator==(const StreamCommit&) const = default;
};

// 'A': a streamed (sub)transaction aborted; equal ids mean the top-level one.
struct StreamAbort {
  uint32_t xid;
  uint32_t subxid;
  bool operator==(const StreamAbort&) const = default;
};

using PgOutputMessage =
    std::variant<Begin, Commit, Origin, Relation, Type, Insert, Update, Delete, Truncate,
                 Message, StreamStart, StreamStop, StreamCommit, StreamAbort>;

// What a message's bytes cannot tell on their own: whether it lies between a
// StreamStart and StreamStop, where change messages carry a leading xid.
struct DecodeContext {
  bool in_stream_block = false;
};

// Decodes one pgoutput message. Returns kDataLoss naming the message and the byte
// offset for truncated or trailing bytes and bad tags, and kUnimplemented for message
// types of protocol versions above 2 (two-phase commit).
[[nodiscard]] absl::StatusOr<PgOutputMessage> Decode(absl::string_view bytes,
                                                     const DecodeContext& context);

// A readable name for the message's type ("Insert", "StreamCommit", ...).
absl::string_view MessageName(const PgOutputMessage& message);

// Decodes a sequence of messages, tracking StreamStart/StreamStop to build each
// message's DecodeContext. Not thread-safe.
class StreamDecoder {
 public:
  [[nodiscard]] absl::StatusOr<PgOutputMessage> Decode(absl::string_view bytes);
  bool in_stream_block() const { return context_.in_stream_block; }

 private:
  DecodeContext context_;
};

}  // namespace cdc::pgoutput

#endif  // CDC_PGOUTPUT_H_

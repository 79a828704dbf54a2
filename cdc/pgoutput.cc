// pgoutput message readers, one per message type, in the order of the PostgreSQL
// docs "Logical Replication Message Formats". Every byte goes through ByteReader, so
// a malformed message ends in a Status, never in an over-read.
#include "cdc/pgoutput.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cdc/byte_reader.h"
#include "common/status_macros.h"

namespace cdc::pgoutput {
namespace {

// Smallest encoding of one Relation column: flags, "" name, type oid, typmod.
constexpr size_t kMinColumnBytes = 1 + 1 + 4 + 4;

absl::StatusOr<std::string> ReadString(ByteReader& in) {
  ASSIGN_OR_RETURN(absl::string_view s, in.ReadCString());
  return std::string(s);
}

// Read the leading xid that change messages carry inside a streamed block.
absl::StatusOr<std::optional<uint32_t>> ReadStreamXid(ByteReader& in,
                                                      const DecodeContext& context) {
  if (!context.in_stream_block) return std::optional<uint32_t>();
  ASSIGN_OR_RETURN(uint32_t xid, in.ReadBE32());
  return std::optional<uint32_t>(xid);
}

// Read TupleData: Int16 column count, then per column a kind byte and, for 't' and
// 'b', an Int32 length and that many bytes.
absl::StatusOr<Tuple> ReadTuple(ByteReader& in) {
  ASSIGN_OR_RETURN(uint16_t ncols, in.ReadBE16());
  if (ncols > in.remaining()) {  // Each column takes at least its kind byte.
    return absl::DataLossError(
        absl::StrCat("tuple claims ", ncols, " columns at byte offset ", in.offset(),
                     " but only ", in.remaining(), " byte(s) remain"));
  }
  Tuple tuple;
  tuple.reserve(ncols);
  for (uint16_t i = 0; i < ncols; ++i) {
    size_t kind_offset = in.offset();
    ASSIGN_OR_RETURN(uint8_t kind, in.ReadU8());
    Value value;
    switch (kind) {
      case 'n':
      case 'u':
        value.kind = static_cast<Value::Kind>(kind);
        break;
      case 't':
      case 'b': {
        value.kind = static_cast<Value::Kind>(kind);
        ASSIGN_OR_RETURN(uint32_t len, in.ReadBE32());
        ASSIGN_OR_RETURN(absl::string_view data, in.ReadBytes(len));
        value.data.assign(data.data(), data.size());
        break;
      }
      default:
        return absl::DataLossError(absl::StrFormat(
            "unknown tuple column kind 0x%02x for column %d at byte offset %d", kind, i,
            kind_offset));
    }
    tuple.push_back(std::move(value));
  }
  return tuple;
}

// Read a tuple that must be introduced by `tag` ('N', 'K' or 'O').
absl::StatusOr<Tuple> ReadTaggedTuple(ByteReader& in, char tag) {
  size_t tag_offset = in.offset();
  ASSIGN_OR_RETURN(uint8_t got, in.ReadU8());
  if (got != static_cast<uint8_t>(tag)) {
    return absl::DataLossError(absl::StrFormat(
        "expected tuple tag '%c' at byte offset %d, got 0x%02x", tag, tag_offset, got));
  }
  return ReadTuple(in);
}

// Read transaction BEGIN from the stream.
absl::StatusOr<Begin> ReadBegin(ByteReader& in) {
  Begin m;
  ASSIGN_OR_RETURN(m.final_lsn, in.ReadLsn());
  ASSIGN_OR_RETURN(m.commit_time, in.ReadI64());
  ASSIGN_OR_RETURN(m.xid, in.ReadBE32());
  return m;
}

// Read transaction COMMIT from the stream.
absl::StatusOr<Commit> ReadCommit(ByteReader& in) {
  Commit m;
  ASSIGN_OR_RETURN(m.flags, in.ReadU8());
  ASSIGN_OR_RETURN(m.commit_lsn, in.ReadLsn());
  ASSIGN_OR_RETURN(m.end_lsn, in.ReadLsn());
  ASSIGN_OR_RETURN(m.commit_time, in.ReadI64());
  return m;
}

// Read ORIGIN from the stream.
absl::StatusOr<Origin> ReadOrigin(ByteReader& in) {
  Origin m;
  ASSIGN_OR_RETURN(m.commit_lsn, in.ReadLsn());
  ASSIGN_OR_RETURN(m.name, ReadString(in));
  return m;
}

// Read the relation description (RELATION) from the stream.
absl::StatusOr<Relation> ReadRelation(ByteReader& in, const DecodeContext& context) {
  Relation m;
  ASSIGN_OR_RETURN(m.xid, ReadStreamXid(in, context));
  ASSIGN_OR_RETURN(m.oid, in.ReadBE32());
  ASSIGN_OR_RETURN(m.schema, ReadString(in));
  ASSIGN_OR_RETURN(m.name, ReadString(in));
  ASSIGN_OR_RETURN(m.replica_identity, in.ReadU8());
  ASSIGN_OR_RETURN(uint16_t natts, in.ReadBE16());
  m.columns.reserve(std::min<size_t>(natts, in.remaining() / kMinColumnBytes));
  for (uint16_t i = 0; i < natts; ++i) {
    Column c;
    ASSIGN_OR_RETURN(c.flags, in.ReadU8());
    ASSIGN_OR_RETURN(c.name, ReadString(in));
    ASSIGN_OR_RETURN(c.type_oid, in.ReadBE32());
    ASSIGN_OR_RETURN(uint32_t typmod, in.ReadBE32());
    c.type_modifier = static_cast<int32_t>(typmod);
    m.columns.push_back(std::move(c));
  }
  return m;
}

// Read type info (TYPE) from the stream.
absl::StatusOr<Type> ReadType(ByteReader& in, const DecodeContext& context) {
  Type m;
  ASSIGN_OR_RETURN(m.xid, ReadStreamXid(in, context));
  ASSIGN_OR_RETURN(m.oid, in.ReadBE32());
  ASSIGN_OR_RETURN(m.schema, ReadString(in));
  ASSIGN_OR_RETURN(m.name, ReadString(in));
  return m;
}

// Read INSERT from the stream.
absl::StatusOr<Insert> ReadInsert(ByteReader& in, const DecodeContext& context) {
  Insert m;
  ASSIGN_OR_RETURN(m.xid, ReadStreamXid(in, context));
  ASSIGN_OR_RETURN(m.relation_oid, in.ReadBE32());
  ASSIGN_OR_RETURN(m.new_tuple, ReadTaggedTuple(in, 'N'));
  return m;
}

// Read UPDATE from the stream: an optional 'K'/'O' old tuple, then the 'N' new one.
absl::StatusOr<Update> ReadUpdate(ByteReader& in, const DecodeContext& context) {
  Update m;
  ASSIGN_OR_RETURN(m.xid, ReadStreamXid(in, context));
  ASSIGN_OR_RETURN(m.relation_oid, in.ReadBE32());
  size_t tag_offset = in.offset();
  ASSIGN_OR_RETURN(uint8_t tag, in.ReadU8());
  if (tag == 'K' || tag == 'O') {
    m.old_kind = static_cast<char>(tag);
    ASSIGN_OR_RETURN(m.old_tuple, ReadTuple(in));
    ASSIGN_OR_RETURN(m.new_tuple, ReadTaggedTuple(in, 'N'));
  } else if (tag == 'N') {
    ASSIGN_OR_RETURN(m.new_tuple, ReadTuple(in));
  } else {
    return absl::DataLossError(absl::StrFormat(
        "expected tuple tag 'K', 'O' or 'N' at byte offset %d, got 0x%02x", tag_offset,
        tag));
  }
  return m;
}

// Read DELETE from the stream.
absl::StatusOr<Delete> ReadDelete(ByteReader& in, const DecodeContext& context) {
  Delete m;
  ASSIGN_OR_RETURN(m.xid, ReadStreamXid(in, context));
  ASSIGN_OR_RETURN(m.relation_oid, in.ReadBE32());
  size_t tag_offset = in.offset();
  ASSIGN_OR_RETURN(uint8_t tag, in.ReadU8());
  if (tag != 'K' && tag != 'O') {
    return absl::DataLossError(absl::StrFormat(
        "expected tuple tag 'K' or 'O' at byte offset %d, got 0x%02x", tag_offset, tag));
  }
  m.old_kind = static_cast<char>(tag);
  ASSIGN_OR_RETURN(m.old_tuple, ReadTuple(in));
  return m;
}

// Read TRUNCATE from the stream.
absl::StatusOr<Truncate> ReadTruncate(ByteReader& in, const DecodeContext& context) {
  Truncate m;
  ASSIGN_OR_RETURN(m.xid, ReadStreamXid(in, context));
  ASSIGN_OR_RETURN(uint32_t nrelids, in.ReadBE32());
  ASSIGN_OR_RETURN(m.options, in.ReadU8());
  if (nrelids > in.remaining() / 4) {
    return absl::DataLossError(
        absl::StrCat("truncate claims ", nrelids, " relations at byte offset ",
                     in.offset(), " but only ", in.remaining(), " byte(s) remain"));
  }
  m.relation_oids.reserve(nrelids);
  for (uint32_t i = 0; i < nrelids; ++i) {
    ASSIGN_OR_RETURN(uint32_t oid, in.ReadBE32());
    m.relation_oids.push_back(oid);
  }
  return m;
}

// Read a logical decoding MESSAGE from the stream.
absl::StatusOr<Message> ReadMessage(ByteReader& in, const DecodeContext& context) {
  Message m;
  ASSIGN_OR_RETURN(m.xid, ReadStreamXid(in, context));
  ASSIGN_OR_RETURN(m.flags, in.ReadU8());
  ASSIGN_OR_RETURN(m.lsn, in.ReadLsn());
  ASSIGN_OR_RETURN(m.prefix, ReadString(in));
  ASSIGN_OR_RETURN(uint32_t len, in.ReadBE32());
  ASSIGN_OR_RETURN(absl::string_view content, in.ReadBytes(len));
  m.content.assign(content.data(), content.size());
  return m;
}

// Read STREAM START from the stream.
absl::StatusOr<StreamStart> ReadStreamStart(ByteReader& in) {
  StreamStart m;
  ASSIGN_OR_RETURN(m.xid, in.ReadBE32());
  ASSIGN_OR_RETURN(m.first_segment, in.ReadU8());
  return m;
}

// Read STREAM COMMIT from the stream.
absl::StatusOr<StreamCommit> ReadStreamCommit(ByteReader& in) {
  StreamCommit m;
  ASSIGN_OR_RETURN(m.xid, in.ReadBE32());
  ASSIGN_OR_RETURN(m.flags, in.ReadU8());
  ASSIGN_OR_RETURN(m.commit_lsn, in.ReadLsn());
  ASSIGN_OR_RETURN(m.end_lsn, in.ReadLsn());
  ASSIGN_OR_RETURN(m.commit_time, in.ReadI64());
  return m;
}

// Read STREAM ABORT from the stream.
absl::StatusOr<StreamAbort> ReadStreamAbort(ByteReader& in) {
  StreamAbort m;
  ASSIGN_OR_RETURN(m.xid, in.ReadBE32());
  ASSIGN_OR_RETURN(m.subxid, in.ReadBE32());
  return m;
}

absl::StatusOr<PgOutputMessage> DecodeBody(char tag, ByteReader& in,
                                           const DecodeContext& context) {
  switch (tag) {
    case 'B':
      return ReadBegin(in);
    case 'C':
      return ReadCommit(in);
    case 'O':
      return ReadOrigin(in);
    case 'R':
      return ReadRelation(in, context);
    case 'Y':
      return ReadType(in, context);
    case 'I':
      return ReadInsert(in, context);
    case 'U':
      return ReadUpdate(in, context);
    case 'D':
      return ReadDelete(in, context);
    case 'T':
      return ReadTruncate(in, context);
    case 'M':
      return ReadMessage(in, context);
    case 'S':
      return ReadStreamStart(in);
    case 'E':
      return StreamStop{};
    case 'c':
      return ReadStreamCommit(in);
    case 'A':
      return ReadStreamAbort(in);
    default:
      break;
  }
  return absl::InternalError("unreachable");
}

struct TagInfo {
  char tag;
  const char* name;
};

// Every message's tag and name, in PgOutputMessage's alternative order.
constexpr TagInfo kTags[] = {
    {'B', "Begin"},        {'C', "Commit"},     {'O', "Origin"},      {'R', "Relation"},
    {'Y', "Type"},         {'I', "Insert"},     {'U', "Update"},      {'D', "Delete"},
    {'T', "Truncate"},     {'M', "Message"},    {'S', "StreamStart"}, {'E', "StreamStop"},
    {'c', "StreamCommit"}, {'A', "StreamAbort"}};
static_assert(std::size(kTags) == std::variant_size_v<PgOutputMessage>);

// Name of a known tag, or nullptr.
const char* TagName(char tag) {
  for (const TagInfo& t : kTags) {
    if (t.tag == tag) return t.name;
  }
  return nullptr;
}

// Protocol version 3 (two-phase commit) tags, which this decoder does not speak.
bool IsTwoPhaseTag(char tag) {
  return tag == 'b' || tag == 'P' || tag == 'K' || tag == 'r' || tag == 'p';
}

}  // namespace

absl::StatusOr<PgOutputMessage> Decode(absl::string_view bytes,
                                       const DecodeContext& context) {
  ByteReader in(bytes);
  ASSIGN_OR_RETURN(uint8_t raw_tag, in.ReadU8());
  char tag = static_cast<char>(raw_tag);
  const char* name = TagName(tag);
  if (name == nullptr) {
    if (IsTwoPhaseTag(tag)) {
      return absl::UnimplementedError(absl::StrFormat(
          "pgoutput two-phase message '%c' needs protocol version 3; only 1 and 2 are "
          "supported",
          tag));
    }
    return absl::DataLossError(absl::StrFormat(
        "unknown pgoutput message type 0x%02x at byte offset 0", raw_tag));
  }
  absl::StatusOr<PgOutputMessage> message = DecodeBody(tag, in, context);
  absl::Status status = message.status();
  if (status.ok()) status = in.ExpectEnd();
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("pgoutput ", name, " message: ", status.message()));
  }
  return message;
}

absl::string_view MessageName(const PgOutputMessage& message) {
  return kTags[message.index()].name;
}

absl::StatusOr<PgOutputMessage> StreamDecoder::Decode(absl::string_view bytes) {
  ASSIGN_OR_RETURN(PgOutputMessage message, pgoutput::Decode(bytes, context_));
  if (std::holds_alternative<StreamStart>(message)) {
    if (context_.in_stream_block) {
      return absl::DataLossError("pgoutput StreamStart message inside a stream block");
    }
    context_.in_stream_block = true;
  } else if (std::holds_alternative<StreamStop>(message)) {
    if (!context_.in_stream_block) {
      return absl::DataLossError("pgoutput StreamStop message outside a stream block");
    }
    context_.in_stream_block = false;
  }
  return message;
}

}  // namespace cdc::pgoutput

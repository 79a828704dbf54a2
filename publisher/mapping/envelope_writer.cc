// WriteEnvelope: protobuf's wire format by hand (varints, length-delimited fields).
#include "publisher/mapping/envelope_writer.h"

#include <cassert>
#include <cstring>

#include "common/proto_time.h"
#include "common/timestamp_parts.h"

namespace publisher {
namespace {

// Wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Size of a string field, 0 when empty (proto3's default is left out).
size_t BytesSize(absl::string_view v) {
  return v.empty() ? 0 : 1 + VarintSize(v.size()) + v.size();
}
// Size of a varint field, 0 for 0.
size_t NumberSize(uint64_t v) { return v == 0 ? 0 : 1 + VarintSize(v); }

// A google.protobuf.Timestamp's varints (int64 seconds as two's complement).
struct Stamp {
  uint64_t seconds;
  uint64_t nanos;
};
Stamp ToStamp(absl::Time t) {
  common::TimestampParts parts = common::SplitTimestamp(t);
  return {static_cast<uint64_t>(parts.seconds), static_cast<uint64_t>(parts.nanos)};
}
size_t StampSize(const Stamp& s) { return NumberSize(s.seconds) + NumberSize(s.nanos); }

// Writes into a buffer already sized for the whole envelope: no capacity checks
// per byte (appending to a string cost a third of mapping's instructions).
class Cursor {
 public:
  explicit Cursor(char* at) : at_(at) {}
  char* at() const { return at_; }

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *at_++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *at_++ = static_cast<char>(v);
  }
  // Field numbers here are below 16: a tag is one byte.
  void Tag(uint32_t field, uint32_t wire_type) {
    *at_++ = static_cast<char>((field << 3) | wire_type);
  }
  void Raw(absl::string_view v) {
    if (v.empty()) return;
    std::memcpy(at_, v.data(), v.size());
    at_ += v.size();
  }
  // A length-delimited value, written even when empty.
  void Delimited(uint32_t field, absl::string_view v) {
    Tag(field, kLengthDelimited);
    Varint(v.size());
    Raw(v);
  }
  // A string or bytes field: nothing for the empty value.
  void Bytes(uint32_t field, absl::string_view v) {
    if (!v.empty()) Delimited(field, v);
  }
  // A varint field: nothing for 0.
  void Number(uint32_t field, uint64_t v) {
    if (v == 0) return;
    Tag(field, kVarint);
    Varint(v);
  }
  // A message field, written even when empty (the mapper always sets them).
  void Timestamp(uint32_t field, const Stamp& s) {
    Tag(field, kLengthDelimited);
    Varint(StampSize(s));
    Number(1, s.seconds);
    Number(2, s.nanos);
  }

 private:
  char* at_;
};

// A header's map entry: key (1) and value (2), both written even when empty, as
// the protobuf library writes map entries.
size_t EntrySize(const std::pair<std::string, std::string>& h) {
  return 2 + VarintSize(h.first.size()) + h.first.size() + VarintSize(h.second.size()) +
         h.second.size();
}

}  // namespace

void WriteEnvelope(const EnvelopeFields& f, std::string* out) {
  Stamp created = ToStamp(f.created_at);
  Stamp committed = ToStamp(f.commit_time);
  size_t commit_time_size = StampSize(committed);
  size_t source_size = NumberSize(f.lsn) + NumberSize(f.commit_lsn) + NumberSize(f.xid) +
                       1 + VarintSize(commit_time_size) + commit_time_size +
                       BytesSize(f.database) + BytesSize(f.schema) + BytesSize(f.table);
  size_t created_size = StampSize(created);
  size_t headers_size = 0;
  for (const auto& h : f.headers) {
    size_t entry = EntrySize(h);
    headers_size += 1 + VarintSize(entry) + entry;
  }
  size_t total = BytesSize(f.id) + BytesSize(f.aggregate_type) +
                 BytesSize(f.aggregate_id) + BytesSize(f.event_type) +
                 BytesSize(f.payload) + headers_size + 1 + VarintSize(created_size) +
                 created_size + 1 + VarintSize(source_size) + source_size +
                 BytesSize(f.content_type);
  out->resize(total);
  Cursor c(out->data());
  c.Bytes(1, f.id);
  c.Bytes(2, f.aggregate_type);
  c.Bytes(3, f.aggregate_id);
  c.Bytes(4, f.event_type);
  c.Bytes(5, f.payload);
  for (const auto& h : f.headers) {
    c.Tag(6, kLengthDelimited);
    c.Varint(EntrySize(h));
    c.Delimited(1, h.first);
    c.Delimited(2, h.second);
  }
  c.Timestamp(7, created);
  c.Tag(8, kLengthDelimited);
  c.Varint(source_size);
  c.Number(1, f.lsn);
  c.Number(2, f.commit_lsn);
  c.Number(3, f.xid);
  c.Timestamp(4, committed);
  c.Bytes(5, f.database);
  c.Bytes(6, f.schema);
  c.Bytes(7, f.table);
  c.Bytes(9, f.content_type);
  assert(c.at() == out->data() + out->size());
}

outbox::v1::Envelope ToEnvelope(const EnvelopeFields& f) {
  outbox::v1::Envelope e;
  e.set_id(std::string(f.id));
  e.set_aggregate_type(std::string(f.aggregate_type));
  e.set_aggregate_id(std::string(f.aggregate_id));
  e.set_event_type(std::string(f.event_type));
  e.set_payload(std::string(f.payload));
  for (const auto& [k, v] : f.headers) (*e.mutable_headers())[k] = v;
  common::SetTimestamp(e.mutable_created_at(), f.created_at);
  outbox::v1::Source* s = e.mutable_source();
  s->set_lsn(f.lsn);
  s->set_commit_lsn(f.commit_lsn);
  s->set_xid(f.xid);
  common::SetTimestamp(s->mutable_commit_time(), f.commit_time);
  s->set_database(std::string(f.database));
  s->set_schema(std::string(f.schema));
  s->set_table(std::string(f.table));
  e.set_content_type(std::string(f.content_type));
  return e;
}

}  // namespace publisher

// WriteEnvelope: protobuf's wire format by hand (varints, length-delimited fields).
#include "publisher/envelope_writer.h"

#include "publisher/timestamp_parts.h"

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

void PutVarint(uint64_t v, std::string* out) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

void PutTag(uint32_t field, uint32_t wire_type, std::string* out) {
  PutVarint((field << 3) | wire_type, out);  // Field numbers here fit one byte.
}

// A string or bytes field: nothing for the empty value (proto3's default).
void PutBytes(uint32_t field, absl::string_view v, std::string* out) {
  if (v.empty()) return;
  PutTag(field, kLengthDelimited, out);
  PutVarint(v.size(), out);
  out->append(v.data(), v.size());
}

// Size of a non-empty string field (0 when empty: left out).
size_t BytesSize(absl::string_view v) {
  return v.empty() ? 0 : 1 + VarintSize(v.size()) + v.size();
}

// A varint field: nothing for 0. int64 values go as their two's complement.
void PutNumber(uint32_t field, uint64_t v, std::string* out) {
  if (v == 0) return;
  PutTag(field, kVarint, out);
  PutVarint(v, out);
}
size_t NumberSize(uint64_t v) { return v == 0 ? 0 : 1 + VarintSize(v); }

// A google.protobuf.Timestamp's varints (int64 seconds as two's complement).
struct Stamp {
  uint64_t seconds;
  uint64_t nanos;
};
Stamp ToStamp(absl::Time t) {
  TimestampParts parts = SplitTimestamp(t);
  return {static_cast<uint64_t>(parts.seconds), static_cast<uint64_t>(parts.nanos)};
}
size_t StampSize(const Stamp& s) { return NumberSize(s.seconds) + NumberSize(s.nanos); }

// A message field (always present, even when empty, as the mapper sets it).
void PutStamp(uint32_t field, const Stamp& s, std::string* out) {
  PutTag(field, kLengthDelimited, out);
  PutVarint(StampSize(s), out);
  PutNumber(1, s.seconds, out);
  PutNumber(2, s.nanos, out);
}

}  // namespace

void WriteEnvelope(const EnvelopeFields& f, std::string* out) {
  out->clear();
  Stamp created = ToStamp(f.created_at);
  Stamp committed = ToStamp(f.commit_time);
  size_t commit_time_size = StampSize(committed);
  size_t source_size = NumberSize(f.lsn) + NumberSize(f.commit_lsn) + NumberSize(f.xid) +
                       1 + VarintSize(commit_time_size) + commit_time_size +
                       BytesSize(f.database) + BytesSize(f.schema) + BytesSize(f.table);
  size_t created_size = StampSize(created);
  size_t headers_size = 0;
  for (const auto& [k, v] : f.headers) {
    size_t entry = 2 + VarintSize(k.size()) + k.size() + VarintSize(v.size()) + v.size();
    headers_size += 1 + VarintSize(entry) + entry;
  }
  out->reserve(BytesSize(f.id) + BytesSize(f.aggregate_type) + BytesSize(f.aggregate_id) +
               BytesSize(f.event_type) + BytesSize(f.payload) + headers_size + 1 +
               VarintSize(created_size) + created_size + 1 + VarintSize(source_size) +
               source_size + BytesSize(f.content_type));

  PutBytes(1, f.id, out);
  PutBytes(2, f.aggregate_type, out);
  PutBytes(3, f.aggregate_id, out);
  PutBytes(4, f.event_type, out);
  PutBytes(5, f.payload, out);
  for (const auto& [k, v] : f.headers) {
    // A map entry: key (1) and value (2), both written even when empty, as the
    // protobuf library writes map entries.
    size_t entry = 2 + VarintSize(k.size()) + k.size() + VarintSize(v.size()) + v.size();
    PutTag(6, kLengthDelimited, out);
    PutVarint(entry, out);
    PutTag(1, kLengthDelimited, out);
    PutVarint(k.size(), out);
    out->append(k);
    PutTag(2, kLengthDelimited, out);
    PutVarint(v.size(), out);
    out->append(v);
  }
  PutStamp(7, created, out);
  PutTag(8, kLengthDelimited, out);
  PutVarint(source_size, out);
  PutNumber(1, f.lsn, out);
  PutNumber(2, f.commit_lsn, out);
  PutNumber(3, f.xid, out);
  PutStamp(4, committed, out);
  PutBytes(5, f.database, out);
  PutBytes(6, f.schema, out);
  PutBytes(7, f.table, out);
  PutBytes(9, f.content_type, out);
}

}  // namespace publisher

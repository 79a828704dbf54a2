// Bounds-checked big-endian reads for protocol decoding.
#include "cdc/byte_reader.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cdc {

absl::Status ByteReader::Truncated(size_t wanted) const {
  return absl::DataLossError(absl::StrCat("truncated at byte offset ", offset_, ": need ",
                                          wanted, " byte(s), ", remaining(), " left"));
}

absl::StatusOr<uint8_t> ByteReader::ReadU8() {
  if (remaining() < 1) return Truncated(1);
  return static_cast<uint8_t>(data_[offset_++]);
}

absl::StatusOr<uint16_t> ByteReader::ReadBE16() {
  if (remaining() < 2) return Truncated(2);
  uint16_t v = 0;
  for (int i = 0; i < 2; ++i) v = (v << 8) | static_cast<uint8_t>(data_[offset_++]);
  return v;
}

absl::StatusOr<uint32_t> ByteReader::ReadBE32() {
  if (remaining() < 4) return Truncated(4);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(data_[offset_++]);
  return v;
}

absl::StatusOr<uint64_t> ByteReader::ReadBE64() {
  if (remaining() < 8) return Truncated(8);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(data_[offset_++]);
  return v;
}

absl::StatusOr<int64_t> ByteReader::ReadI64() {
  absl::StatusOr<uint64_t> v = ReadBE64();
  if (!v.ok()) return v.status();
  return static_cast<int64_t>(*v);
}

absl::StatusOr<Lsn> ByteReader::ReadLsn() {
  absl::StatusOr<uint64_t> v = ReadBE64();
  if (!v.ok()) return v.status();
  return Lsn(*v);
}

absl::StatusOr<absl::string_view> ByteReader::ReadCString() {
  size_t nul = data_.find('\0', offset_);
  if (nul == absl::string_view::npos) {
    return absl::DataLossError(absl::StrCat("unterminated string at byte offset ",
                                            offset_, ": no NUL in the ", remaining(),
                                            " byte(s) left"));
  }
  absl::string_view s = data_.substr(offset_, nul - offset_);
  offset_ = nul + 1;
  return s;
}

absl::StatusOr<absl::string_view> ByteReader::ReadBytes(size_t n) {
  if (remaining() < n) return Truncated(n);
  absl::string_view s = data_.substr(offset_, n);
  offset_ += n;
  return s;
}

absl::string_view ByteReader::ReadRest() {
  absl::string_view s = data_.substr(offset_);
  offset_ = data_.size();
  return s;
}

absl::Status ByteReader::ExpectEnd() const {
  if (remaining() == 0) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat(remaining(), " unexpected trailing byte(s) at offset ", offset_));
}

}  // namespace cdc

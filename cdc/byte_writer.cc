// Big-endian protocol field encoding.
#include "cdc/byte_writer.h"

namespace cdc {

ByteWriter& ByteWriter::U8(uint8_t v) {
  out_.push_back(static_cast<char>(v));
  return *this;
}

ByteWriter& ByteWriter::BE16(uint16_t v) {
  for (int shift = 8; shift >= 0; shift -= 8)
    out_.push_back(static_cast<char>(v >> shift));
  return *this;
}

ByteWriter& ByteWriter::BE32(uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out_.push_back(static_cast<char>(v >> shift));
  return *this;
}

ByteWriter& ByteWriter::BE64(uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8)
    out_.push_back(static_cast<char>(v >> shift));
  return *this;
}

ByteWriter& ByteWriter::CString(absl::string_view s) {
  out_.append(s.data(), s.size());
  out_.push_back('\0');
  return *this;
}

ByteWriter& ByteWriter::Bytes(absl::string_view s) {
  out_.append(s.data(), s.size());
  return *this;
}

}  // namespace cdc

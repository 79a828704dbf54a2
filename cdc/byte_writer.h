// Appends big-endian protocol fields to a string: the write half of ByteReader, as
// PostgreSQL's pq_send* functions are the write half of pq_getmsg*.
#ifndef CDC_BYTE_WRITER_H_
#define CDC_BYTE_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace cdc {

class ByteWriter {
 public:
  ByteWriter& U8(uint8_t v);
  ByteWriter& BE16(uint16_t v);
  ByteWriter& BE32(uint32_t v);
  ByteWriter& BE64(uint64_t v);
  // Writes `s` followed by a NUL (protocol "String"). `s` must not contain NUL.
  ByteWriter& CString(absl::string_view s);
  ByteWriter& Bytes(absl::string_view s);

  const std::string& data() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace cdc

#endif  // CDC_BYTE_WRITER_H_

// A cursor over a byte buffer in network byte order, as PostgreSQL's pq_getmsg*
// functions read protocol messages. It owns every bounds check: callers never index
// the buffer themselves, so malformed input yields a kDataLoss status naming the byte
// offset, never an over-read.
//
// The reader does not own the bytes: the buffer must outlive the reader and every
// string_view it returns.
#ifndef CDC_BYTE_READER_H_
#define CDC_BYTE_READER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cdc/lsn.h"

namespace cdc {

class ByteReader {
 public:
  explicit ByteReader(absl::string_view data) : data_(data) {}

  // Read one unsigned byte (Byte1 / Int8).
  [[nodiscard]] absl::StatusOr<uint8_t> ReadU8();
  // Read a big-endian Int16.
  [[nodiscard]] absl::StatusOr<uint16_t> ReadBE16();
  // Read a big-endian Int32.
  [[nodiscard]] absl::StatusOr<uint32_t> ReadBE32();
  // Read a big-endian Int64.
  [[nodiscard]] absl::StatusOr<uint64_t> ReadBE64();
  // Read a big-endian signed Int64 (timestamps).
  [[nodiscard]] absl::StatusOr<int64_t> ReadI64();
  // Read an Int64 WAL position.
  [[nodiscard]] absl::StatusOr<Lsn> ReadLsn();
  // Read a NUL-terminated string (protocol "String"); the NUL is consumed, not returned.
  [[nodiscard]] absl::StatusOr<absl::string_view> ReadCString();
  // Read exactly `n` bytes. Fails, without allocating, when fewer remain.
  [[nodiscard]] absl::StatusOr<absl::string_view> ReadBytes(size_t n);
  // Everything not yet read.
  absl::string_view ReadRest();

  // Fails unless every byte has been consumed: trailing garbage is corruption too.
  [[nodiscard]] absl::Status ExpectEnd() const;

  size_t offset() const { return offset_; }
  size_t remaining() const { return data_.size() - offset_; }

 private:
  absl::Status Truncated(size_t wanted) const;

  absl::string_view data_;
  size_t offset_ = 0;
};

}  // namespace cdc

#endif  // CDC_BYTE_READER_H_

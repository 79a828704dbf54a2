// A PostgreSQL WAL position (XLogRecPtr): a 64-bit byte offset into the WAL,
// written by the server as two hex halves "X/Y" (high 32 bits / low 32 bits).
#ifndef CDC_LSN_H_
#define CDC_LSN_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cdc {

class Lsn {
 public:
  constexpr Lsn() = default;
  constexpr explicit Lsn(uint64_t value) : value_(value) {}

  // Parses "X/Y" as printed by pg_current_wal_lsn(): each half 1-8 hex digits.
  [[nodiscard]] static absl::StatusOr<Lsn> Parse(absl::string_view text);

  constexpr uint64_t value() const { return value_; }
  constexpr bool is_valid() const { return value_ != 0; }  // 0/0 is InvalidXLogRecPtr.

  // Formats as the server does: upper-case hex halves, "16/B374D848".
  std::string ToString() const;

  friend constexpr bool operator==(Lsn a, Lsn b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(Lsn a, Lsn b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(Lsn a, Lsn b) { return a.value_ < b.value_; }
  friend constexpr bool operator<=(Lsn a, Lsn b) { return a.value_ <= b.value_; }
  friend constexpr bool operator>(Lsn a, Lsn b) { return a.value_ > b.value_; }
  friend constexpr bool operator>=(Lsn a, Lsn b) { return a.value_ >= b.value_; }

 private:
  uint64_t value_ = 0;
};

std::ostream& operator<<(std::ostream& os, Lsn lsn);

}  // namespace cdc

#endif  // CDC_LSN_H_

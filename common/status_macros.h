// The project's one pair of Status propagation macros.
//
// Abseil 20220623 (Debian bookworm) ships no status macros, so every module uses
// these two, and only these two, to return early on error.
#ifndef COMMON_STATUS_MACROS_H_
#define COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define OUTBOX_STATUS_CONCAT_INNER_(a, b) a##b
#define OUTBOX_STATUS_CONCAT_(a, b) OUTBOX_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status); returns it from the enclosing function if not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status _outbox_status = (expr);          \
    if (!_outbox_status.ok()) return _outbox_status; \
  } while (0)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, otherwise
// moves the value into `lhs`, which may be a declaration (`auto x`) or an lvalue.
#define ASSIGN_OR_RETURN(lhs, rexpr)                                                     \
  OUTBOX_ASSIGN_OR_RETURN_IMPL_(OUTBOX_STATUS_CONCAT_(_outbox_statusor_, __LINE__), lhs, \
                                rexpr)

#define OUTBOX_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // COMMON_STATUS_MACROS_H_

// Fatal errors of the harness programs (outbox-chaos, outbox-bench): one line on
// stderr, "<program>: FATAL: why", then exit status 2, which the programs reserve
// for "the harness itself failed" (a failed check is exit 1).
#ifndef TOOLS_HARNESS_FATAL_H_
#define TOOLS_HARNESS_FATAL_H_

#include <errno.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace harness {

[[noreturn]] inline void Die(const std::string& why) {
  std::cerr << program_invocation_short_name << ": FATAL: " << why << std::endl;
  std::exit(2);
}

// The value, or Die naming `what` and the status.
template <typename T>
T Must(absl::StatusOr<T> v, const std::string& what) {
  if (!v.ok()) Die(absl::StrCat(what, ": ", v.status().ToString()));
  return *std::move(v);
}

}  // namespace harness

#endif  // TOOLS_HARNESS_FATAL_H_

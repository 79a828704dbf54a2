// Small helpers shared by the integration tests.
#ifndef TESTS_TEST_UTIL_H_
#define TESTS_TEST_UTIL_H_

#include <cstdlib>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace test_util {

// The value, or a test failure naming the status and an abort: for set-up steps
// without which the rest of the test means nothing.
template <typename T>
T ValueOrDie(absl::StatusOr<T> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  if (!v.ok()) std::abort();
  return *std::move(v);
}

}  // namespace test_util

#endif  // TESTS_TEST_UTIL_H_

// InstallCrashReport: absl's symbolizer and failure signal handler.
#include "common/crash_report.h"

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"

namespace common {

void InstallCrashReport(const char* argv0) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)argv0;
#else
  absl::InitializeSymbolizer(argv0);
  absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions());
#endif
}

}  // namespace common

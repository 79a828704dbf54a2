// What a crash leaves behind: a stack trace on stderr, then the signal's own
// ending (a core where the system keeps them).
#ifndef COMMON_CRASH_REPORT_H_
#define COMMON_CRASH_REPORT_H_

namespace common {

// On SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and SIGTRAP, prints the signal and
// the crashing thread's symbolized stack on stderr (absl's failure signal
// handler), then dies of the same signal, so exit status and core are as
// without it. Also installs it for SIGTERM: call it before the program's own
// SIGTERM and SIGINT handlers, which replace it there. Not in sanitizer builds,
// whose own reports say more. `argv0` finds the binary's symbols.
void InstallCrashReport(const char* argv0);

}  // namespace common

#endif  // COMMON_CRASH_REPORT_H_

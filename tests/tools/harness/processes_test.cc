// harness::Process under a stop signal: a tool killed by its operator leaves no
// child behind.
#include "tools/harness/processes.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "gtest/gtest.h"

namespace harness {
namespace {

// Forks a "tool" that starts a long child through harness::Process and waits;
// sends it `sig`; returns how the tool's child ended (it is reparented to this
// test, a subreaper, so its end can be read here).
struct Ending {
  int tool_status = 0;
  int child_status = 0;
  bool child_reaped = false;
};

Ending StopAToolWith(int sig, bool handler_installed) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  int pids[2];
  EXPECT_EQ(pipe(pids), 0);
  pid_t tool = fork();
  if (tool == 0) {
    close(pids[0]);
    if (handler_installed) KillChildrenOnStopSignal();
    auto child = Process::Start({"/bin/sleep", "300"}, "/dev/null");
    if (!child.ok()) _exit(3);
    pid_t pid = (*child)->pid();
    if (write(pids[1], &pid, sizeof(pid)) != sizeof(pid)) _exit(4);
    for (;;) pause();
  }
  close(pids[1]);
  pid_t child = -1;
  EXPECT_EQ(read(pids[0], &child, sizeof(child)), static_cast<ssize_t>(sizeof(child)));
  close(pids[0]);
  Ending e;
  kill(tool, sig);
  EXPECT_EQ(waitpid(tool, &e.tool_status, 0), tool);
  if (handler_installed) {
    e.child_reaped =
        WaitFor([&] { return waitpid(child, &e.child_status, WNOHANG) == child; },
                absl::Seconds(30));
  } else {
    e.child_reaped = waitpid(child, &e.child_status, WNOHANG) == child;
  }
  if (!e.child_reaped) {  // The leak the handler prevents: stop it here.
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  return e;
}

TEST(ProcessTest, SigtermOrSigintKillsTheToolsChildrenAndTheToolDiesOfIt) {
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    Ending e = StopAToolWith(sig, true);
    ASSERT_TRUE(WIFSIGNALED(e.tool_status));
    EXPECT_EQ(WTERMSIG(e.tool_status), sig);
    ASSERT_TRUE(e.child_reaped);
    ASSERT_TRUE(WIFSIGNALED(e.child_status));
    EXPECT_EQ(WTERMSIG(e.child_status), SIGKILL);
  }
}

// Without the handler the child outlives the tool: what the tests above guard
// against is real.
TEST(ProcessTest, WithoutTheHandlerTheChildOutlivesTheTool) {
  Ending e = StopAToolWith(SIGTERM, false);
  ASSERT_TRUE(WIFSIGNALED(e.tool_status));
  EXPECT_FALSE(e.child_reaped);
}

}  // namespace
}  // namespace harness

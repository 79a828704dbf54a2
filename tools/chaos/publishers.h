// The publisher processes of a chaos run: per shard (--shards), a primary and, for
// a while, a standby on the same slot. Without shards there is one, on the one
// slot. Safe to use from several threads (the soak's fault lanes).
#ifndef TOOLS_CHAOS_PUBLISHERS_H_
#define TOOLS_CHAOS_PUBLISHERS_H_

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tools/harness/processes.h"

namespace chaos {

class Publishers {
 public:
  // `pg`: the publishers' conninfo; `brokers`: their --brokers; `args`: flags
  // every publisher gets besides the common ones (and its --shard).
  Publishers(std::string pg, std::string brokers, std::string dir,
             std::vector<std::string> args, int shards);

  int shards() const { return static_cast<int>(shards_.size()); }

  // Makes sure every shard has a primary running; restarts one that exited (an exit
  // 2 while PostgreSQL restarts is legitimate: unreachable at start).
  void EnsurePrimary();
  // Sends `sig` to the shard's primary and waits for it to end.
  void KillPrimary(int sig, int shard);
  void StartStandby(int shard);
  // The shard's primary dies; its standby, if any, becomes the primary.
  void FailOver(int shard);
  void StopAll();

  // A running publisher process: its pid, the port of its /metrics and /healthz,
  // its shard (0-based) and its log.
  struct Running {
    pid_t pid;
    int metrics_port;
    bool primary;  // Not a standby started beside it.
    int shard;
    std::string log_path;
  };
  std::vector<Running> running();
  int launched();
  std::vector<std::string> unexpected_exits();

 private:
  struct Member {
    // Shared: a kill waits for the exit outside the lock, while others go on.
    std::shared_ptr<harness::Process> process;
    int metrics_port = 0;
    std::string log_path;
  };
  struct Shard {
    Member primary, standby;
    bool expected_exit = false;
  };

  Member Launch(int shard);
  void EnsurePrimaryLocked(int shard);
  // Signals the shard's primary; returns it, to be waited for without the lock.
  std::shared_ptr<harness::Process> SignalPrimaryLocked(int sig, int shard);
  void WaitGone(harness::Process& p);

  const std::string pg_, brokers_, dir_;
  const std::vector<std::string> args_;
  std::mutex mu_;
  std::vector<Shard> shards_;
  int launched_ = 0;
  std::vector<std::string> unexpected_exits_;
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_PUBLISHERS_H_

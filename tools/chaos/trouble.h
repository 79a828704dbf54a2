// What the Kafka client went through in a run, counted in the publishers' logs.
#ifndef TOOLS_CHAOS_TROUBLE_H_
#define TOOLS_CHAOS_TROUBLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace chaos {

// How often each of `needles` occurs in the files of `dir`, in their order.
std::vector<int64_t> CountInLogs(const std::string& dir,
                                 const std::vector<std::string>& needles);
// How often each of `needles` occurs in the file `path`.
std::vector<int64_t> CountInFile(const std::string& path,
                                 const std::vector<std::string>& needles);

// The records of the Kafka transactions that the publisher whose log is `path`
// saw fail (exactly-once: "the Kafka transaction failed (N record(s) in it").
// A commit that failed on the client's side may have committed on the broker.
int64_t FailedTransactionRecords(const std::string& path);

// What a rewind logs (a producer session ended, the slot read again).
inline constexpr char kRewindLine[] = "ending the Kafka producer session";

// What the Kafka client went through, counted in the publishers' logs: fatal
// producer errors, rewinds (a producer recreated, the slot re-read), Kafka
// transactions aborted, and deliveries reported without proof of storage.
struct ProducerTrouble {
  int64_t fatal = 0;
  int64_t rewinds = 0;
  int64_t aborted = 0;
  int64_t unproven = 0;

  static ProducerTrouble Read(const std::string& dir) {
    std::vector<int64_t> n =
        CountInLogs(dir, {"Kafka producer failed fatally", kRewindLine, "in it, aborted",
                          "without proof of storage"});
    return {n[0], n[1], n[2], n[3]};
  }
  ProducerTrouble operator-(const ProducerTrouble& o) const {
    return {fatal - o.fatal, rewinds - o.rewinds, aborted - o.aborted,
            unproven - o.unproven};
  }
  ProducerTrouble& operator+=(const ProducerTrouble& o) {
    fatal += o.fatal;
    rewinds += o.rewinds;
    aborted += o.aborted;
    unproven += o.unproven;
    return *this;
  }
  std::string ToString() const {
    return absl::StrCat("fatal ", fatal, ", rewinds ", rewinds, ", aborted ", aborted,
                        ", unproven ", unproven);
  }
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_TROUBLE_H_

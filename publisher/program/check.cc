// RunChecks: --check wired from its parts, reads (the shells), judgements and the
// summary.
#include "publisher/program/check.h"

#include <utility>
#include <vector>

#include "publisher/kafka/preflight_reads.h"
#include "publisher/operations/preflight.h"
#include "publisher/postgres/preflight_reads.h"
#include "publisher/program/options.h"

namespace publisher {

bool RunChecks(const Config& config, std::ostream& out) {
  PreflightOptions options = PreflightOptionsFrom(config);
  PgFindings pg = ReadPgFindings(config.pg, options);
  KafkaFindings kafka = ReadKafkaFindings(KafkaOptionsFrom(config));
  std::vector<CheckLine> lines = JudgePostgres(options, pg);
  for (CheckLine& l : JudgeKafka(options, pg, kafka)) lines.push_back(std::move(l));
  int failed = 0;
  for (const CheckLine& l : lines) {
    out << FormatCheckLine(l) << "\n";
    failed += !l.ok;
  }
  if (failed == 0) {
    out << "all " << lines.size() << " checks passed\n";
  } else {
    out << failed << " of " << lines.size() << " checks failed\n";
  }
  out.flush();
  return failed == 0;
}

}  // namespace publisher

// Preflight: how a check line reads, and the Kafka checks (the brokers, the
// topics rows go to, the dead-letter and checkpoint topics).
#include "publisher/operations/preflight.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "publisher/mapping/mapper.h"

namespace publisher {

std::string FormatCheckLine(const CheckLine& line) {
  return absl::StrCat(line.ok ? "ok    " : "FAIL  ", line.what, ": ", line.detail);
}

std::vector<CheckLine> JudgeKafka(const PreflightOptions& options, const PgFindings& pg,
                                  const KafkaFindings& kafka) {
  std::vector<CheckLine> out;
  if (!kafka.reachable.ok()) {
    out.push_back(CheckLine::Fail(
        "Kafka brokers", absl::StrCat(kafka.reachable.message(),
                                      ": check --brokers, the network, and the -X "
                                      "security.protocol / sasl.* / ssl.* settings")));
    return out;
  }
  out.push_back(CheckLine::Ok(
      "Kafka brokers",
      absl::StrCat(kafka.brokers, " broker(s) answered at ", options.brokers)));
  auto exists = [&](const std::string& topic) {
    return std::find(kafka.topics.begin(), kafka.topics.end(), topic) !=
           kafka.topics.end();
  };
  for (size_t i = 0; i < options.tables.size(); ++i) {
    std::string what = absl::StrCat("topics of ", options.tables[i].qualified());
    if (i >= pg.tables.size() || !pg.tables[i].ok() || !pg.tables[i]->exists) {
      out.push_back(
          CheckLine::Fail(what, "not checked: the outbox table could not be read"));
      continue;
    }
    absl::StatusOr<BoundRelation> bound =
        BoundRelation::Bind(pg.tables[i]->shape, options.columns, options.topic);
    if (!bound.ok()) {
      out.push_back(
          CheckLine::Fail(what, absl::StrCat("not checked: ", bound.status().message())));
      continue;
    }
    if (std::optional<std::string> topic = bound->fixed_topic()) {
      out.push_back(
          exists(*topic)
              ? CheckLine::Ok(
                    what, absl::StrCat("every row goes to ", *topic, ", which exists"))
              : CheckLine::Fail(what,
                                absl::StrCat("every row goes to ", *topic,
                                             ", which does not exist: create it, or "
                                             "enable auto.create.topics.enable on the "
                                             "brokers")));
      continue;
    }
    std::vector<std::string> matching;
    for (const std::string& t : kafka.topics) {
      if (bound->CouldRouteTo(t)) matching.push_back(t);
    }
    out.push_back(CheckLine::Ok(
        what, absl::StrCat("chosen per row by ", options.topic, "; ", matching.size(),
                           " existing topic(s) match", matching.empty() ? "" : ": ",
                           absl::StrJoin(matching, ", "),
                           "; rows for a missing topic halt or go to the "
                           "dead-letter topic (--on-error)")));
  }
  if (options.on_error == OnError::kDeadLetter) {
    const std::string& dl = options.dead_letter_topic;
    out.push_back(exists(dl)
                      ? CheckLine::Ok("dead-letter topic", absl::StrCat(dl, " exists"))
                      : CheckLine::Fail("dead-letter topic",
                                        absl::StrCat(dl,
                                                     " does not exist: create it (a dead "
                                                     "letter that cannot be stored halts "
                                                     "the publisher)")));
  }
  if (options.exactly_once) {
    const std::string& cp = options.checkpoint_topic;
    if (exists(cp)) {
      out.push_back(
          CheckLine::Ok("checkpoint topic", absl::StrCat(cp,
                                                         " exists (it must be compacted: "
                                                         "cleanup.policy=compact)")));
    } else if (options.create) {
      out.push_back(CheckLine::Ok(
          "checkpoint topic", absl::StrCat(cp,
                                           " does not exist; the publisher creates it "
                                           "(compacted, one partition) at start")));
    } else {
      out.push_back(
          CheckLine::Fail("checkpoint topic",
                          absl::StrCat(cp,
                                       " does not exist and --create=false: create it "
                                       "compacted (cleanup.policy=compact, one "
                                       "partition, replication factor 3)")));
    }
  }
  return out;
}

}  // namespace publisher

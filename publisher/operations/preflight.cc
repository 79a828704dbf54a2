// Preflight: how a check line reads, and the Kafka checks (the brokers, the
// topics rows go to, the dead-letter and checkpoint topics).
#include "publisher/operations/preflight.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "publisher/mapping/mapper.h"

namespace publisher {

std::string FormatCheckLine(const CheckLine& line) {
  return absl::StrCat(!line.ok       ? "FAIL  "
                      : line.warning ? "warn  "
                                     : "ok    ",
                      line.what, ": ", line.detail);
}

namespace {

bool TopicExists(const KafkaFindings& kafka, const std::string& topic) {
  return std::find(kafka.topics.begin(), kafka.topics.end(), topic) != kafka.topics.end();
}

// The topics one outbox table's rows go to: one fixed topic, which must exist, or a
// template, whose matching topics are listed.
CheckLine JudgeTableTopics(const PreflightOptions& options, const TableName& table,
                           const absl::StatusOr<cdc::TableFacts>* facts,
                           const KafkaFindings& kafka) {
  std::string what = absl::StrCat("topics of ", table.qualified());
  if (facts == nullptr || !facts->ok() || !(*facts)->exists) {
    return CheckLine::Fail(what, "not checked: the outbox table could not be read");
  }
  absl::StatusOr<BoundRelation> bound =
      BoundRelation::Bind((*facts)->shape, options.columns, options.topic);
  if (!bound.ok()) {
    return CheckLine::Fail(what, absl::StrCat("not checked: ", bound.status().message()));
  }
  if (std::optional<std::string> topic = bound->fixed_topic()) {
    return TopicExists(kafka, *topic)
               ? CheckLine::Ok(
                     what, absl::StrCat("every row goes to ", *topic, ", which exists"))
               : CheckLine::Fail(what,
                                 absl::StrCat("every row goes to ", *topic,
                                              ", which does not exist: create it, or "
                                              "enable auto.create.topics.enable on "
                                              "the brokers"));
  }
  std::vector<std::string> matching;
  for (const std::string& t : kafka.topics) {
    if (bound->CouldRouteTo(t)) matching.push_back(t);
  }
  return CheckLine::Ok(
      what, absl::StrCat("chosen per row by ", options.topic, "; ", matching.size(),
                         " existing topic(s) match", matching.empty() ? "" : ": ",
                         absl::StrJoin(matching, ", "),
                         "; rows for a missing topic halt or go to the "
                         "dead-letter topic (--on-error)"));
}

// Exactly-once's checkpoint topic: present, or created at start, or missing.
CheckLine JudgeCheckpointTopic(const PreflightOptions& options,
                               const KafkaFindings& kafka) {
  const std::string& cp = options.checkpoint_topic;
  if (TopicExists(kafka, cp)) {
    return CheckLine::Ok(
        "checkpoint topic",
        absl::StrCat(cp, " exists (it must be compacted: cleanup.policy=compact)"));
  }
  if (options.create) {
    return CheckLine::Ok("checkpoint topic",
                         absl::StrCat(cp,
                                      " does not exist; the publisher creates it "
                                      "(compacted, one partition) at start"));
  }
  return CheckLine::Fail("checkpoint topic",
                         absl::StrCat(cp,
                                      " does not exist and --create=false: create it "
                                      "compacted (cleanup.policy=compact, one "
                                      "partition, replication factor 3)"));
}

}  // namespace

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
  for (size_t i = 0; i < options.tables.size(); ++i) {
    out.push_back(JudgeTableTopics(options, options.tables[i],
                                   i < pg.tables.size() ? &pg.tables[i] : nullptr,
                                   kafka));
  }
  if (options.on_error == OnError::kDeadLetter) {
    const std::string& dl = options.dead_letter_topic;
    out.push_back(TopicExists(kafka, dl)
                      ? CheckLine::Ok("dead-letter topic", absl::StrCat(dl, " exists"))
                      : CheckLine::Fail("dead-letter topic",
                                        absl::StrCat(dl,
                                                     " does not exist: create it (a dead "
                                                     "letter that cannot be stored halts "
                                                     "the publisher)")));
  }
  if (options.exactly_once) out.push_back(JudgeCheckpointTopic(options, kafka));
  return out;
}

}  // namespace publisher

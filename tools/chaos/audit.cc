// The fault suite's verdicts: early confirmations and order checks.
#include "tools/chaos/audit.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace chaos {
namespace {

// First deliveries grouped by partition; with `positioned`, only those that carry
// their WAL position (not re-published from the table).
std::map<int32_t, std::vector<const Delivered*>> ByPartition(
    const std::map<std::string, Delivered>& first, bool positioned) {
  std::map<int32_t, std::vector<const Delivered*>> out;
  for (const auto& [id, d] : first) {
    if (!positioned || !Republished(d)) out[d.partition].push_back(&d);
  }
  return out;
}

void Describe(std::vector<std::string>* examples, std::string what) {
  if (examples != nullptr && examples->size() < 3) examples->push_back(std::move(what));
}

}  // namespace

int64_t RepublishedFirst(const std::map<std::string, Delivered>& first) {
  int64_t n = 0;
  for (const auto& [id, d] : first) n += Republished(d);
  return n;
}

int64_t PositionedDuplicates(const std::vector<Delivered>& all) {
  std::map<std::string, int64_t> positioned;
  for (const Delivered& d : all) {
    if (!Republished(d)) ++positioned[d.id];
  }
  int64_t n = 0;
  for (const auto& [id, count] : positioned) n += count - 1;
  return n;
}

std::map<std::string, Delivered> FirstDeliveries(const std::vector<Delivered>& all) {
  std::map<std::string, Delivered> first;
  for (const Delivered& d : all) {
    auto [it, fresh] = first.emplace(d.id, d);
    if (!fresh && d.offset < it->second.offset && d.partition == it->second.partition)
      it->second = d;
  }
  return first;
}

std::vector<EarlyConfirmation> FindEarlyConfirmations(
    const std::map<std::string, Delivered>& first, const std::vector<Missing>& missing,
    const std::vector<ConfirmationSample>& samples) {
  const Missing* lowest = nullptr;  // Never stored: below any confirmation is early.
  for (const Missing& m : missing) {
    if (lowest == nullptr || m.commit_lsn < lowest->commit_lsn) lowest = &m;
  }
  // Per partition: rows by commit LSN, with the highest offset among each prefix,
  // so "some row below LSN C sits at or above watermark H" is one binary search.
  struct Index {
    std::vector<uint64_t> commit_lsns;
    std::vector<const Delivered*> max_offset_row;  // Over rows [0, i].
  };
  std::map<int32_t, Index> index;
  for (auto& [partition, rows] : ByPartition(first, /*positioned=*/true)) {
    std::sort(rows.begin(), rows.end(), [](const Delivered* a, const Delivered* b) {
      return a->commit_lsn < b->commit_lsn;
    });
    Index& ix = index[partition];
    for (const Delivered* d : rows) {
      const Delivered* best = ix.max_offset_row.empty() ? d : ix.max_offset_row.back();
      if (d->offset > best->offset) best = d;
      ix.commit_lsns.push_back(d->commit_lsn);
      ix.max_offset_row.push_back(best);
    }
  }
  std::vector<EarlyConfirmation> early;
  // A partition's high watermark never goes down (no unclean leader election), but
  // a leader elected a moment ago can report a stale one until its followers fetch
  // (seen on Apache Kafka after a broker was frozen and another killed). So each
  // sample counts the highest watermark sampled so far, a true lower bound of what
  // the partition held by then.
  std::map<int32_t, int64_t> highest;
  for (ConfirmationSample s : samples) {
    for (auto& [partition, high] : s.high_watermarks) {
      int64_t& h = highest[partition];
      h = std::max(h, high);
      high = h;
    }
    if (lowest != nullptr && lowest->commit_lsn < s.confirmed) {
      Delivered row;
      row.id = lowest->id;
      row.commit_lsn = lowest->commit_lsn;
      early.push_back({s, row, true});
      continue;
    }
    const Delivered* worst = nullptr;
    for (const auto& [partition, high] : s.high_watermarks) {
      auto it = index.find(partition);
      if (it == index.end()) continue;
      const Index& ix = it->second;
      size_t below =
          std::lower_bound(ix.commit_lsns.begin(), ix.commit_lsns.end(), s.confirmed) -
          ix.commit_lsns.begin();
      if (below == 0) continue;
      const Delivered* row = ix.max_offset_row[below - 1];
      if (row->offset >= high && (worst == nullptr || row->offset > worst->offset))
        worst = row;
    }
    if (worst != nullptr) early.push_back({s, *worst, false});
  }
  return early;
}

int64_t PartitionOrderViolations(const std::map<std::string, Delivered>& first,
                                 std::vector<std::string>* examples) {
  int64_t violations = 0;
  for (auto& [partition, rows] : ByPartition(first, /*positioned=*/true)) {
    std::sort(rows.begin(), rows.end(), [](const Delivered* a, const Delivered* b) {
      return a->offset < b->offset;
    });
    const Delivered* latest = nullptr;  // Latest in commit order so far.
    for (const Delivered* d : rows) {
      auto key = [](const Delivered* x) { return std::tie(x->commit_lsn, x->lsn); };
      if (latest != nullptr && key(d) < key(latest)) {
        ++violations;
        Describe(examples,
                 absl::StrCat("partition ", partition, ": ", d->id, " (commit LSN ",
                              d->commit_lsn, ") first delivered at offset ", d->offset,
                              ", after ", latest->id, " (commit LSN ", latest->commit_lsn,
                              ") at offset ", latest->offset));
      }
      if (latest == nullptr || key(d) > key(latest)) latest = d;
    }
  }
  return violations;
}

int64_t KeyOrderViolations(const std::map<std::string, Delivered>& first,
                           const std::map<std::string, Committed>& history,
                           std::vector<std::string>* examples) {
  // Walk each partition in offset order; an aggregate's numbers must rise.
  int64_t violations = 0;
  std::map<std::string, int64_t> last_seq;
  std::map<std::string, int32_t> partition_of;
  for (auto& [partition, rows] : ByPartition(first, /*positioned=*/false)) {
    std::sort(rows.begin(), rows.end(), [](const Delivered* a, const Delivered* b) {
      return a->offset < b->offset;
    });
    for (const Delivered* d : rows) {
      auto it = history.find(d->id);
      if (it == history.end()) continue;
      const Committed& c = it->second;
      auto [p, fresh_key] = partition_of.emplace(c.aggregate, partition);
      if (!fresh_key && p->second != partition) {
        ++violations;
        Describe(examples, absl::StrCat("aggregate ", c.aggregate, " is in partitions ",
                                        p->second, " and ", partition));
      }
      auto [s, first_of_key] = last_seq.emplace(c.aggregate, c.seq);
      if (first_of_key) continue;
      if (c.seq < s->second) {
        ++violations;
        Describe(examples, absl::StrCat("aggregate ", c.aggregate, " partition ",
                                        partition, ": ", d->id, " (seq ", c.seq,
                                        ") first delivered after seq ", s->second));
      }
      s->second = std::max(s->second, c.seq);
    }
  }
  return violations;
}

}  // namespace chaos

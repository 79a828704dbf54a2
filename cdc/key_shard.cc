// KeyShard: parsing, names, the row filter and the coverage query.
#include "cdc/key_shard.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cdc {

absl::StatusOr<KeyShard> ParseKeyShard(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  KeyShard s;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &s.index) ||
      !absl::SimpleAtoi(parts[1], &s.count) || s.count < 1 || s.count > kMaxShards ||
      s.index < 1 || s.index > s.count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected I/N, this publisher's shard I of N (1 <= I <= N <= ", kMaxShards,
        "), such as 1/4"));
  }
  return s;
}

std::string KeyShardName(const KeyShard& shard) {
  return absl::StrCat(shard.index, "/", shard.count);
}

std::string ShardedName(absl::string_view base, const KeyShard& shard) {
  return absl::StrCat(base, "_", shard.index, "_of_", shard.count);
}

std::string ShardRowFilter(absl::string_view quoted_key_column, const KeyShard& shard) {
  std::string filter =
      absl::StrCat("((hashtext(", quoted_key_column, "::text) % ", shard.count, ") + ",
                   shard.count, ") % ", shard.count, " = ", shard.index - 1);
  // hashtext(NULL) is NULL, which no filter selects: shard 1 takes the NULL keys.
  if (shard.index == 1) absl::StrAppend(&filter, " OR ", quoted_key_column, " IS NULL");
  return filter;
}

std::string ShardCoverageQuery(const std::vector<std::string>& row_filters,
                               absl::string_view quoted_key_column,
                               absl::string_view samples) {
  std::vector<std::string> hits;
  for (const std::string& f : row_filters)
    hits.push_back(absl::StrCat("(CASE WHEN (", f, ") THEN 1 ELSE 0 END)"));
  if (hits.empty()) hits.push_back("0");
  // The filters name the key column: each sample is shown to them under that name.
  return absl::StrCat(
      "SELECT count(*) FILTER (WHERE hits = 0), count(*) FILTER (WHERE hits > 1), "
      "min(key::text) FILTER (WHERE hits = 0), min(key::text) FILTER (WHERE hits > 1), "
      "count(*) FROM (SELECT ",
      quoted_key_column, " AS key, ", absl::StrJoin(hits, " + "),
      " AS hits FROM (SELECT k AS ", quoted_key_column, " FROM (", samples,
      ") AS samples(k)) AS shown) AS judged");
}

}  // namespace cdc

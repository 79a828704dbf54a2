// KeyShard: one of N publishers sharing one outbox table, each publishing the rows
// whose key hashes to its shard (--shard I/N). Pure.
//
// Each shard has its own slot and its own publication, whose row filter
// (PostgreSQL 15+) keeps the rows of its keys:
//
//   ((hashtext(key::text) % N) + N) % N = I - 1      (shard 1 also: OR key IS NULL)
//
// hashtext is built in and immutable, as a row filter needs; the sum keeps the
// remainder non-negative without abs(), which fails on the lowest integer. A key
// lives in one shard, so its rows keep their order. Every shard's walsender still
// decodes the whole WAL: sharding spreads Kafka producing and the publisher's work,
// not PostgreSQL's decoding (docs/operations.md).
#ifndef CDC_KEY_SHARD_H_
#define CDC_KEY_SHARD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cdc {

struct KeyShard {
  int index = 1;  // 1..count.
  int count = 1;
  bool operator==(const KeyShard&) const = default;
};

// The most shards a table may be split into.
inline constexpr int kMaxShards = 64;

// "I/N", 1 <= I <= N <= kMaxShards.
[[nodiscard]] absl::StatusOr<KeyShard> ParseKeyShard(absl::string_view text);
std::string KeyShardName(const KeyShard& shard);  // "2/4".

// The slot or publication of `shard`: "<base>_<I>_of_<N>".
std::string ShardedName(absl::string_view base, const KeyShard& shard);

// The row filter of `shard`'s publication over the key column (quoted).
std::string ShardRowFilter(absl::string_view quoted_key_column, const KeyShard& shard);

// A query that counts, over sample keys, those that the shards' row filters do not
// select exactly once. `row_filters` are the shards' filters as
// pg_publication_tables.rowfilter shows them (over the key column's name);
// `samples` is a query of one column, k, of the key column's type. Answers one
// row: the number of keys selected by no shard, the number selected by more than
// one, one example of each (as text, NULL when none), and how many were tried.
std::string ShardCoverageQuery(const std::vector<std::string>& row_filters,
                               absl::string_view quoted_key_column,
                               absl::string_view samples);

}  // namespace cdc

#endif  // CDC_KEY_SHARD_H_

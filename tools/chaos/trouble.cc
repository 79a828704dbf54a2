#include "tools/chaos/trouble.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace chaos {

std::vector<int64_t> CountInFile(const std::string& path,
                                 const std::vector<std::string>& needles) {
  std::vector<int64_t> n(needles.size());
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    for (size_t i = 0; i < needles.size(); ++i) {
      for (size_t at = line.find(needles[i]); at != std::string::npos;
           at = line.find(needles[i], at + needles[i].size()))
        ++n[i];
    }
  }
  return n;
}

std::vector<int64_t> CountInLogs(const std::string& dir,
                                 const std::vector<std::string>& needles) {
  std::vector<int64_t> n(needles.size());
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return n;
  while (dirent* e = readdir(d)) {
    std::vector<int64_t> in_file =
        CountInFile(absl::StrCat(dir, "/", e->d_name), needles);
    for (size_t i = 0; i < n.size(); ++i) n[i] += in_file[i];
  }
  closedir(d);
  return n;
}

int64_t FailedTransactionRecords(const std::string& path) {
  const std::string needle = "the Kafka transaction failed (";
  std::ifstream in(path);
  int64_t records = 0;
  for (std::string line; std::getline(in, line);) {
    for (size_t at = line.find(needle); at != std::string::npos;
         at = line.find(needle, at + needle.size())) {
      records += std::atoll(line.c_str() + at + needle.size());
    }
  }
  return records;
}

}  // namespace chaos

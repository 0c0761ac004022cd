#include "common/cores.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace inferd {
namespace {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The cgroup path of the v2 hierarchy ("0::/path") and of the v1 cpu controller
// ("N:cpu,cpuacct:/path"), from /proc/self/cgroup's text.
struct CgroupPaths {
  std::optional<std::string> unified;
  std::optional<std::string> cpu_v1;
};

CgroupPaths ParseSelfCgroup(std::string_view text) {
  CgroupPaths paths;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string path(line.substr(second + 1));
    if (line.substr(0, first) == "0" && controllers.empty()) {
      paths.unified = path;
      continue;
    }
    std::string_view rest = controllers;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      if (rest.substr(0, comma) == "cpu") paths.cpu_v1 = path;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return paths;
}

// "/a/b" -> {"/a/b", "/a", ""}: the folders whose limits bind the process, deepest first.
std::vector<std::string> SelfAndAncestors(std::string path) {
  std::vector<std::string> folders;
  while (!path.empty() && path != "/") {
    folders.push_back(path);
    path.resize(path.rfind('/'));
  }
  folders.emplace_back();
  return folders;
}

std::optional<int> QuotaOfV2(const std::string& folder) {
  const std::optional<std::string> text = ReadSmallFile(folder + "/cpu.max");
  if (!text) return std::nullopt;
  std::istringstream fields(*text);
  std::string quota;
  long long period = 0;
  fields >> quota >> period;
  if (!fields || quota == "max") return std::nullopt;
  try {
    return CoresOfQuota(std::stoll(quota), period);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int> QuotaOfV1(const std::string& folder) {
  const std::optional<std::string> quota = ReadSmallFile(folder + "/cpu.cfs_quota_us");
  const std::optional<std::string> period = ReadSmallFile(folder + "/cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  try {
    return CoresOfQuota(std::stoll(*quota), std::stoll(*period));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int> Smaller(std::optional<int> a, std::optional<int> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

std::optional<int> CoresOfQuota(long long quota_us, long long period_us) {
  if (quota_us <= 0 || period_us <= 0) return std::nullopt;  // -1: no limit (v1)
  return static_cast<int>(std::max(1LL, quota_us / period_us));
}

std::optional<int> CgroupCpuLimit(const std::string& cgroup_root, std::string_view self_cgroup) {
  const CgroupPaths paths = ParseSelfCgroup(self_cgroup);
  std::optional<int> limit;
  if (paths.unified) {
    for (const std::string& folder : SelfAndAncestors(*paths.unified)) {
      limit = Smaller(limit, QuotaOfV2(cgroup_root + folder));
    }
  }
  if (paths.cpu_v1) {
    for (const std::string& folder : SelfAndAncestors(*paths.cpu_v1)) {
      limit = Smaller(limit, QuotaOfV1(cgroup_root + "/cpu" + folder));
    }
  }
  return limit;
}

int CoresAvailable() {
  cpu_set_t set;
  const int affinity = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  const std::optional<std::string> self = ReadSmallFile("/proc/self/cgroup");
  const std::optional<int> quota = self ? CgroupCpuLimit("/sys/fs/cgroup", *self) : std::nullopt;
  return quota ? std::min(affinity, *quota) : affinity;
}

}  // namespace inferd

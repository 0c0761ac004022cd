#include "observability/process_metrics.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/strings.h"

namespace inferd {
namespace {

absl::StatusOr<std::string> ReadWhole(const char* path) {
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double BootTimeSeconds() {
  absl::StatusOr<std::string> stat = ReadWhole("/proc/stat");
  if (!stat.ok()) return 0;
  const size_t at = stat->find("\nbtime ");
  if (at == std::string::npos) return 0;
  int64_t btime = 0;
  const char* begin = stat->data() + at + 7;
  std::from_chars(begin, stat->data() + stat->size(), btime);
  return static_cast<double>(btime);
}

}  // namespace

absl::StatusOr<ProcessSample> ParseProcStat(std::string_view stat, double ticks_per_second,
                                            int64_t page_bytes, double boot_time_seconds) {
  // The command name (field 2) is in parentheses and may itself contain spaces or ')': the
  // fields that follow start after the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos) {
    return absl::InvalidArgumentError("/proc/self/stat: no ')' after the command name");
  }
  // Fields 3.. ; field N is at index N - 3.
  std::vector<std::string_view> fields = SplitSkipEmpty(stat.substr(close + 1), ' ');
  constexpr size_t kUtime = 14 - 3, kStime = 15 - 3, kThreads = 20 - 3, kStart = 22 - 3,
                   kVsize = 23 - 3, kRss = 24 - 3;
  if (fields.size() <= kRss) {
    return absl::InvalidArgumentError(
        StrCat("/proc/self/stat: ", fields.size() + 2, " fields, expected at least 24"));
  }
  auto number = [&](size_t index, int64_t* out) {
    const std::string_view f = fields[index];
    auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), *out);
    return ec == std::errc() && end == f.data() + f.size();
  };
  int64_t utime = 0, stime = 0, threads = 0, start = 0, vsize = 0, rss = 0;
  if (!number(kUtime, &utime) || !number(kStime, &stime) || !number(kThreads, &threads) ||
      !number(kStart, &start) || !number(kVsize, &vsize) || !number(kRss, &rss)) {
    return absl::InvalidArgumentError("/proc/self/stat: a numeric field is not a number");
  }
  ProcessSample sample;
  sample.cpu_seconds = static_cast<double>(utime + stime) / ticks_per_second;
  sample.start_time_seconds = boot_time_seconds + static_cast<double>(start) / ticks_per_second;
  sample.virtual_bytes = vsize;
  sample.resident_bytes = rss * page_bytes;
  sample.threads = threads;
  return sample;
}

absl::StatusOr<ProcessSample> SampleThisProcess() {
  static const double boot_time = BootTimeSeconds();
  absl::StatusOr<std::string> stat = ReadWhole("/proc/self/stat");
  if (!stat.ok()) return stat.status();
  absl::StatusOr<ProcessSample> sample =
      ParseProcStat(*stat, static_cast<double>(sysconf(_SC_CLK_TCK)),
                    static_cast<int64_t>(sysconf(_SC_PAGESIZE)), boot_time);
  if (!sample.ok()) return sample;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++sample->open_fds;
  }
  return sample;
}

}  // namespace inferd

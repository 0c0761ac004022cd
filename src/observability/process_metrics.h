// The process's own CPU time, memory and file descriptors, read from /proc at scrape time
// (the standard process_* metrics every Prometheus client exports).
#ifndef INFERD_OBSERVABILITY_PROCESS_METRICS_H_
#define INFERD_OBSERVABILITY_PROCESS_METRICS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace inferd {

struct ProcessSample {
  double cpu_seconds = 0;         // user + system
  double start_time_seconds = 0;  // since the Unix epoch
  int64_t resident_bytes = 0;
  int64_t virtual_bytes = 0;
  int64_t open_fds = 0;
  int64_t threads = 0;
};

// Parses the text of /proc/<pid>/stat. `ticks_per_second` and `page_bytes` come from
// sysconf; `boot_time_seconds` is /proc/stat's btime. open_fds is left 0.
absl::StatusOr<ProcessSample> ParseProcStat(std::string_view stat, double ticks_per_second,
                                            int64_t page_bytes, double boot_time_seconds);

// This process, now.
absl::StatusOr<ProcessSample> SampleThisProcess();

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_PROCESS_METRICS_H_

// How many CPU cores this process may use, for sizing thread pools: its affinity mask (which
// taskset and cpusets narrow) and its cgroup's CPU quota (a Kubernetes CPU limit, `docker
// --cpus`), whichever is smaller.
#ifndef INFERD_COMMON_CORES_H_
#define INFERD_COMMON_CORES_H_

#include <optional>
#include <string>
#include <string_view>

namespace inferd {

int CoresAvailable();

// The whole cores a CPU quota allows (quota / period, rounded down, at least 1), or nullopt
// for no limit. Rounded down because a team of threads that meets at barriers (llama.cpp's
// decode step, an intra-op pool) stalls as a whole when the quota throttles one member: with
// 2 threads on a 1.5-core quota, both wait out every period's throttled tail.
std::optional<int> CoresOfQuota(long long quota_us, long long period_us);

// The smallest quota on the path from the process's cgroup up to the hierarchy's root, read
// under `cgroup_root` (normally /sys/fs/cgroup) with `self_cgroup` the text of
// /proc/self/cgroup: cgroup v2's cpu.max, else v1's cpu.cfs_quota_us and cpu.cfs_period_us
// in the cpu controller's folder. A parent's limit binds its children, so the walk takes
// the minimum. nullopt when nothing limits the process or nothing can be read.
std::optional<int> CgroupCpuLimit(const std::string& cgroup_root, std::string_view self_cgroup);

}  // namespace inferd

#endif  // INFERD_COMMON_CORES_H_

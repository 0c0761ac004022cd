#include "common/cores.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace inferd {
namespace {

namespace fs = std::filesystem;

// A fake /sys/fs/cgroup under a temporary folder.
class FakeCgroupRoot {
 public:
  FakeCgroupRoot() {
    std::string pattern = (fs::temp_directory_path() / "cores-test-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
  }
  ~FakeCgroupRoot() { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(CoresOfQuotaTest, RoundsDownToWholeCores) {
  EXPECT_EQ(CoresOfQuota(150000, 100000), 1);
  EXPECT_EQ(CoresOfQuota(250000, 100000), 2);
  EXPECT_EQ(CoresOfQuota(400000, 100000), 4);
}

TEST(CoresOfQuotaTest, ASliceOfOneCoreStillGetsOneThread) {
  EXPECT_EQ(CoresOfQuota(50000, 100000), 1);
}

TEST(CoresOfQuotaTest, NoQuotaIsNoLimit) {
  EXPECT_EQ(CoresOfQuota(-1, 100000), std::nullopt);
  EXPECT_EQ(CoresOfQuota(100000, 0), std::nullopt);
}

TEST(CgroupCpuLimitTest, ReadsTheV2QuotaOfTheProcessCgroup) {
  FakeCgroupRoot fake;
  fake.Write("kubepods/pod1/cpu.max", "200000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "0::/kubepods/pod1\n"), 2);
}

TEST(CgroupCpuLimitTest, AParentsSmallerQuotaBindsTheChild) {
  FakeCgroupRoot fake;
  fake.Write("kubepods/cpu.max", "100000 100000\n");
  fake.Write("kubepods/pod1/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "0::/kubepods/pod1\n"), 1);
}

TEST(CgroupCpuLimitTest, MaxEverywhereIsNoLimit) {
  FakeCgroupRoot fake;
  fake.Write("cpu.max", "max 100000\n");
  fake.Write("a/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "0::/a\n"), std::nullopt);
}

TEST(CgroupCpuLimitTest, ANamespacedContainerReadsItsQuotaAtTheRoot) {
  // Inside a cgroup namespace /proc/self/cgroup says "/" and the container's own cgroup is
  // mounted at /sys/fs/cgroup.
  FakeCgroupRoot fake;
  fake.Write("cpu.max", "300000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "0::/\n"), 3);
}

TEST(CgroupCpuLimitTest, ReadsTheV1CpuControllersQuota) {
  FakeCgroupRoot fake;
  fake.Write("cpu/docker/abc/cpu.cfs_quota_us", "150000\n");
  fake.Write("cpu/docker/abc/cpu.cfs_period_us", "100000\n");
  fake.Write("cpu/cpu.cfs_quota_us", "-1\n");
  fake.Write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "4:memory:/x\n2:cpu,cpuacct:/docker/abc\n0::/\n"), 1);
}

TEST(CgroupCpuLimitTest, AV1PathThatIsNotMountedFallsBackToTheRootsQuota) {
  // A v1 container without a cgroup namespace sees the host's path in /proc/self/cgroup but
  // its own cgroup at the mount's root.
  FakeCgroupRoot fake;
  fake.Write("cpu/cpu.cfs_quota_us", "200000\n");
  fake.Write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "2:cpu,cpuacct:/docker/abc\n"), 2);
}

TEST(CgroupCpuLimitTest, NothingReadableIsNoLimit) {
  FakeCgroupRoot fake;
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "0::/a/b\n"), std::nullopt);
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "garbage"), std::nullopt);
  fake.Write("cpu.max", "lots 100000\n");
  EXPECT_EQ(CgroupCpuLimit(fake.root(), "0::/\n"), std::nullopt);
}

TEST(CoresAvailableTest, IsAtLeastOneAndAtMostTheAffinityMask) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_GE(CoresAvailable(), 1);
  EXPECT_LE(CoresAvailable(), CPU_COUNT(&set));
}

}  // namespace
}  // namespace inferd

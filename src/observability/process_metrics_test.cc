#include "observability/process_metrics.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

// A real /proc/self/stat line whose command name holds a space and a ')'.
constexpr char kStat[] =
    "4242 (infer d) x) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 7 0 1000 "
    "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ProcessMetricsTest, ParsesCpuMemoryThreadsAndStartTime) {
  absl::StatusOr<ProcessSample> sample = ParseProcStat(kStat, 100.0, 4096, 1'000'000.0);
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_DOUBLE_EQ(sample->cpu_seconds, 3.0);  // (250 + 50) ticks / 100
  EXPECT_EQ(sample->threads, 7);
  EXPECT_DOUBLE_EQ(sample->start_time_seconds, 1'000'010.0);
  EXPECT_EQ(sample->virtual_bytes, 123456789);
  EXPECT_EQ(sample->resident_bytes, 2048 * 4096);
}

TEST(ProcessMetricsTest, RejectsTruncatedText) {
  EXPECT_FALSE(ParseProcStat("4242 (inferd) S 1 2 3", 100.0, 4096, 0).ok());
  EXPECT_FALSE(ParseProcStat("no parenthesis", 100.0, 4096, 0).ok());
}

TEST(ProcessMetricsTest, SamplesThisProcess) {
  absl::StatusOr<ProcessSample> sample = SampleThisProcess();
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_GT(sample->resident_bytes, 0);
  EXPECT_GT(sample->open_fds, 2);  // stdin, stdout, stderr at least
  EXPECT_GE(sample->threads, 1);
}

}  // namespace
}  // namespace inferd

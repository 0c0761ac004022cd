#include "observability/gpu_metrics.h"

#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class FakeGpuReader : public GpuReader {
 public:
  explicit FakeGpuReader(absl::StatusOr<std::vector<GpuSample>> samples)
      : samples_(std::move(samples)) {}
  absl::StatusOr<std::vector<GpuSample>> Read() override { return samples_; }

 private:
  absl::StatusOr<std::vector<GpuSample>> samples_;
};

GpuSample Gpu(int index, std::string uuid, std::string name) {
  GpuSample s;
  s.index = index;
  s.uuid = std::move(uuid);
  s.name = std::move(name);
  return s;
}

TEST(GpuMetricsTest, WritesOneLabelledSeriesPerGpuAndValue) {
  GpuSample a = Gpu(0, "GPU-a", "NVIDIA L40S");
  a.utilization_ratio = 0.5;
  a.memory_used_bytes = 1024;
  a.memory_total_bytes = 48'000'000'000;
  a.power_watts = 120.25;
  a.temperature_celsius = 61;
  GpuSample b = Gpu(1, "GPU-b", "NVIDIA L40S");
  b.utilization_ratio = 0;
  const std::string text = GpuMetricsText({a, b});
  EXPECT_THAT(text, HasSubstr("# TYPE inferd_gpu_utilization_ratio gauge\n"
                              "inferd_gpu_utilization_ratio{gpu=\"0\",uuid=\"GPU-a\",name=\"NVIDIA "
                              "L40S\"} 0.5\n"
                              "inferd_gpu_utilization_ratio{gpu=\"1\",uuid=\"GPU-b\",name=\"NVIDIA "
                              "L40S\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("inferd_gpu_memory_used_bytes{gpu=\"0\",uuid=\"GPU-a\",name=\""
                              "NVIDIA L40S\"} 1024\n"));
  EXPECT_THAT(text, HasSubstr("inferd_gpu_memory_total_bytes{gpu=\"0\",uuid=\"GPU-a\",name=\""
                              "NVIDIA L40S\"} 48000000000\n"));
  EXPECT_THAT(text, HasSubstr("inferd_gpu_power_watts{gpu=\"0\",uuid=\"GPU-a\",name=\"NVIDIA "
                              "L40S\"} 120.25\n"));
  EXPECT_THAT(text, HasSubstr("inferd_gpu_temperature_celsius{gpu=\"0\",uuid=\"GPU-a\",name=\""
                              "NVIDIA L40S\"} 61\n"));
  // b reports utilisation only: no other series of it, and no 0 standing in for "unknown".
  EXPECT_THAT(text, Not(HasSubstr("inferd_gpu_power_watts{gpu=\"1\"")));
  EXPECT_THAT(text, Not(HasSubstr("inferd_gpu_memory_used_bytes{gpu=\"1\"")));
}

TEST(GpuMetricsTest, FamilyWithNoValueIsLeftOut) {
  GpuSample a = Gpu(0, "GPU-a", "MIG 1g.10gb");
  a.memory_used_bytes = 5;
  const std::string text = GpuMetricsText({a});
  EXPECT_THAT(text, HasSubstr("inferd_gpu_memory_used_bytes"));
  EXPECT_THAT(text, Not(HasSubstr("inferd_gpu_power_watts")));
  EXPECT_THAT(text, Not(HasSubstr("inferd_gpu_utilization_ratio")));
}

TEST(GpuMetricsTest, NoGpuNoText) { EXPECT_EQ(GpuMetricsText({}), ""); }

TEST(GpuMetricsTest, ProcessReaderIsReadAtEveryScrapeAndFailuresExportNothing) {
  SetProcessGpuReader(nullptr);
  EXPECT_EQ(ProcessGpuMetricsText(), "");
  GpuSample a = Gpu(3, "GPU-c", "H100");
  a.temperature_celsius = 40;
  SetProcessGpuReader(std::make_unique<FakeGpuReader>(std::vector<GpuSample>{a}));
  EXPECT_THAT(ProcessGpuMetricsText(),
              HasSubstr("inferd_gpu_temperature_celsius{gpu=\"3\",uuid=\"GPU-c\",name=\"H100\"} "
                        "40\n"));
  SetProcessGpuReader(std::make_unique<FakeGpuReader>(absl::UnavailableError("gone")));
  EXPECT_EQ(ProcessGpuMetricsText(), "");
  SetProcessGpuReader(nullptr);
}

}  // namespace
}  // namespace inferd

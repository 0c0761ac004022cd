#include "observability/nvml_reader.h"

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// INFERD_FAKE_NVML: the path of testing/fake_nvml.cc's library (src/CMakeLists.txt).
class NvmlReaderTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("FAKE_NVML_DEVICES");
    unsetenv("FAKE_NVML_INIT_FAILS");
    SetProcessGpuReader(nullptr);
  }
};

TEST_F(NvmlReaderTest, AbsentLibraryIsUnavailableAndExportsNothing) {
  absl::StatusOr<std::unique_ptr<NvmlReader>> reader =
      NvmlReader::Open("libinferd-no-such-nvml.so.1");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reader.status().message(), HasSubstr("libinferd-no-such-nvml.so.1"));
  SetProcessGpuReader(nullptr);
  EXPECT_EQ(ProcessGpuMetricsText(), "");
}

TEST_F(NvmlReaderTest, LibraryWithoutNvmlIsUnavailableNamingTheMissingFunction) {
  // libm loads but exports no NVML function.
  absl::StatusOr<std::unique_ptr<NvmlReader>> reader = NvmlReader::Open("libm.so.6");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reader.status().message(), HasSubstr("lacks nvmlInit_v2"));
}

TEST_F(NvmlReaderTest, ReadsEveryGpuConvertingUnits) {
  absl::StatusOr<std::unique_ptr<NvmlReader>> reader = NvmlReader::Open(INFERD_FAKE_NVML);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->device_count(), 2);
  absl::StatusOr<std::vector<GpuSample>> samples = (*reader)->Read();
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  const GpuSample& h200 = (*samples)[0];
  EXPECT_EQ(h200.index, 0);
  EXPECT_EQ(h200.uuid, "GPU-0f4a1c9e-fake-0000");
  EXPECT_EQ(h200.name, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(*h200.utilization_ratio, 0.87);
  EXPECT_EQ(*h200.memory_total_bytes, 150'754'820'096);
  EXPECT_EQ(*h200.memory_used_bytes, 73'014'444'032);
  EXPECT_DOUBLE_EQ(*h200.power_watts, 312.5);  // NVML reports milliwatts
  EXPECT_DOUBLE_EQ(*h200.temperature_celsius, 54);
  const GpuSample& other = (*samples)[1];
  EXPECT_EQ(other.index, 1);
  EXPECT_FALSE(other.power_watts.has_value());  // NVML_ERROR_NOT_SUPPORTED: left out
  EXPECT_DOUBLE_EQ(*other.temperature_celsius, 31);
}

TEST_F(NvmlReaderTest, NoGpuIsNotFound) {
  setenv("FAKE_NVML_DEVICES", "0", 1);
  absl::StatusOr<std::unique_ptr<NvmlReader>> reader = NvmlReader::Open(INFERD_FAKE_NVML);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(reader.status().message(), HasSubstr("sees no GPU"));
}

TEST_F(NvmlReaderTest, DriverNotLoadedIsFailedPreconditionWithNvmlsReason) {
  setenv("FAKE_NVML_INIT_FAILS", "1", 1);
  absl::StatusOr<std::unique_ptr<NvmlReader>> reader = NvmlReader::Open(INFERD_FAKE_NVML);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reader.status().message(), HasSubstr("Driver Not Loaded (NVML error 9)"));
}

TEST_F(NvmlReaderTest, InstalledReaderFeedsTheScrape) {
  absl::StatusOr<std::unique_ptr<NvmlReader>> reader = NvmlReader::Open(INFERD_FAKE_NVML);
  ASSERT_TRUE(reader.ok()) << reader.status();
  SetProcessGpuReader(*std::move(reader));
  const std::string text = ProcessGpuMetricsText();
  EXPECT_THAT(text, HasSubstr("inferd_gpu_power_watts{gpu=\"0\",uuid=\"GPU-0f4a1c9e-fake-0000\","
                              "name=\"NVIDIA H200\"} 312.5\n"));
  EXPECT_THAT(text, HasSubstr("inferd_gpu_temperature_celsius{gpu=\"1\","
                              "uuid=\"GPU-77d0b3aa-fake-0001\",name=\"NVIDIA \\\"Test\\\" GPU\"} "
                              "31\n"));
  EXPECT_THAT(text, Not(HasSubstr("inferd_gpu_power_watts{gpu=\"1\"")));
  // Byte counts past 10^11 are written exactly.
  EXPECT_THAT(text, HasSubstr("inferd_gpu_memory_total_bytes{gpu=\"0\",uuid=\"GPU-0f4a1c9e-fake-"
                              "0000\",name=\"NVIDIA H200\"} 150754820096\n"));
}

}  // namespace
}  // namespace inferd

#include "core/types/device.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

TEST(DeviceTest, ParsesCpuAndCudaForms) {
  EXPECT_EQ(ParseDevice("cpu").value(), Device{});
  EXPECT_EQ(ParseDevice("cuda").value(), (Device{Device::Kind::kCuda, 0}));
  EXPECT_EQ(ParseDevice("cuda:0").value(), (Device{Device::Kind::kCuda, 0}));
  EXPECT_EQ(ParseDevice("cuda:7").value(), (Device{Device::Kind::kCuda, 7}));
  EXPECT_EQ(ParseDevice("cuda:12").value().index, 12);
}

TEST(DeviceTest, CanonicalSpelling) {
  EXPECT_EQ(ParseDevice("cpu")->ToString(), "cpu");
  EXPECT_EQ(ParseDevice("cuda")->ToString(), "cuda:0");
  EXPECT_EQ(ParseDevice("cuda:3")->ToString(), "cuda:3");
}

TEST(DeviceTest, RejectsMalformedDevicesNamingTheAcceptedForms) {
  for (const std::string bad : {"", "CPU", "tpu", "cuda:", "cuda:-1", "cuda:x", "cuda:1x",
                                "cuda:01", "cuda:4096", "cuda:0 ", " cpu", "cuda0"}) {
    absl::StatusOr<Device> device = ParseDevice(bad);
    ASSERT_FALSE(device.ok()) << "'" << bad << "'";
    EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(device.status().message()), HasSubstr("'cuda:N'")) << bad;
  }
}

TEST(DeviceTest, GpuShorthandIsRefusedWithWhatToWriteInstead) {
  absl::StatusOr<Device> device = ParseDevice("gpu");
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(std::string(device.status().message()), HasSubstr("'cuda:0'"));
}

}  // namespace
}  // namespace inferd

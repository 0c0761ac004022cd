#include "backends/torch/torch_cuda.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(TorchCudaTest, CpuNeedsNoCuda) { EXPECT_TRUE(CheckCudaDevice(Device{}).ok()); }

// The pinned PyTorch wheel is a CUDA build: its libtorch_cuda.so loads on any machine, with
// or without a GPU, and then reports the devices it finds.
TEST(TorchCudaTest, CudaSupportLoadsFromTheTorchFolder) {
  const absl::Status loaded = EnsureTorchCudaLoaded();
  ASSERT_TRUE(loaded.ok()) << loaded;
  EXPECT_TRUE(EnsureTorchCudaLoaded().ok());  // idempotent
  // What the driver shows must be what torch reports: none without an NVIDIA device node,
  // at least one with one (unless CUDA_VISIBLE_DEVICES hides them all).
  const char* visible_env = std::getenv("CUDA_VISIBLE_DEVICES");
  const bool hidden = visible_env != nullptr &&
                      (std::string(visible_env).empty() || std::string(visible_env) == "-1");
  if (!std::filesystem::exists("/dev/nvidia0") || hidden) {
    EXPECT_EQ(VisibleCudaDevices(), 0);
  } else {
    EXPECT_GE(VisibleCudaDevices(), 1);
  }
}

TEST(TorchCudaTest, DeviceBeyondTheVisibleOnesIsRefusedWithTheCount) {
  ASSERT_TRUE(EnsureTorchCudaLoaded().ok());
  const int visible = VisibleCudaDevices();
  const absl::Status status = CheckCudaDevice(Device{Device::Kind::kCuda, visible});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(status.message());
  EXPECT_THAT(message, AllOf(HasSubstr("'cuda:" + std::to_string(visible) + "'"),
                             HasSubstr("CUDA_VISIBLE_DEVICES")));
  if (visible == 0) {
    EXPECT_THAT(message, HasSubstr("no CUDA device is visible"));
    EXPECT_EQ(CudaAllocatedBytes(0), std::nullopt);
  } else {
    EXPECT_THAT(message, HasSubstr(std::to_string(visible) + " CUDA device(s)"));
    EXPECT_TRUE(CheckCudaDevice(Device{Device::Kind::kCuda, 0}).ok());
    EXPECT_TRUE(CudaAllocatedBytes(0).has_value());
  }
}

}  // namespace
}  // namespace inferd

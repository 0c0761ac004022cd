#include "core/types/device.h"

#include <charconv>

#include "common/strings.h"

namespace inferd {

std::string Device::ToString() const {
  return kind == Kind::kCpu ? std::string("cpu") : StrCat("cuda:", index);
}

absl::StatusOr<Device> ParseDevice(std::string_view text) {
  if (text == "cpu") return Device{};
  if (text == "cuda") return Device{.kind = Device::Kind::kCuda, .index = 0};
  constexpr std::string_view kCudaPrefix = "cuda:";
  if (text.starts_with(kCudaPrefix)) {
    const std::string_view digits = text.substr(kCudaPrefix.size());
    int index = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() &&
        index >= 0 && index < 1024 && (digits.size() == 1 || digits[0] != '0')) {
      return Device{.kind = Device::Kind::kCuda, .index = index};
    }
  }
  if (text == "gpu") {
    return absl::InvalidArgumentError(
        "'gpu' (one instance per visible GPU) is not supported yet; name the device, e.g. "
        "'cuda:0', and add an instance group per GPU");
  }
  return absl::InvalidArgumentError(
      StrCat("'", text,
             "' is not a device: use 'cpu', 'cuda' or 'cuda:N' (N the device index as this "
             "process sees it, after CUDA_VISIBLE_DEVICES)"));
}

}  // namespace inferd

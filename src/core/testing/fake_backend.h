// Test-only engines for tests of the model manager, the inference service and the frontends:
// models that compute something checkable without LibTorch or ONNX Runtime.
#ifndef INFERD_CORE_TESTING_FAKE_BACKEND_H_
#define INFERD_CORE_TESTING_FAKE_BACKEND_H_

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/backend/backend.h"
#include "core/types/data_type.h"
#include "core/types/tensor.h"

namespace inferd::testing {

// Returns its first input as its only output; counts `bytes` against the memory budget.
class IdentityModel : public BackendModel {
 public:
  explicit IdentityModel(uint64_t bytes = 0) : bytes_(bytes) {}
  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    return std::vector<Tensor>{inputs[0]};
  }
  uint64_t memory_bytes() const override { return bytes_; }

 private:
  const uint64_t bytes_;
};

// y = 2x for FP32 outputs; an output of another datatype is allocated but not filled.
// `before_execute` (optional) runs first on the execution thread: a test's gate.
class DoublingModel : public BackendModel {
 public:
  explicit DoublingModel(DataType output_type = DataType::kFp32,
                         std::function<void()> before_execute = {})
      : output_type_(output_type), before_execute_(std::move(before_execute)) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    if (before_execute_) before_execute_();
    const Tensor& x = inputs[0];
    Tensor y = Tensor::Allocate(output_type_, x.shape()).value();
    if (output_type_ == DataType::kFp32) {
      for (int64_t i = 0; i < x.element_count(); ++i) {
        y.mutable_data_as<float>()[i] = 2 * x.data_as<float>()[i];
      }
    }
    return std::vector<Tensor>{y};
  }

 private:
  const DataType output_type_;
  const std::function<void()> before_execute_;
};

// Backend "fake" (platform "fake_platform"): a version folder must hold model.fake, and
// loads as DoublingModel, whose output datatype is the config's `parameters:
// {output_datatype: ...}` (FP32 by default). `make_model`, when given, builds the model
// instead (after the file check).
class FakeBackend : public Backend {
 public:
  using ModelFactory =
      std::function<absl::StatusOr<std::unique_ptr<BackendModel>>(const BackendLoadRequest&)>;

  explicit FakeBackend(ModelFactory make_model = {}) : make_model_(std::move(make_model)) {}

  std::string_view name() const override { return "fake"; }
  std::string_view platform() const override { return "fake_platform"; }
  std::string_view model_filename() const override { return "model.fake"; }

  // Engine loads by every FakeBackend in this process (weight sharing skips the backend).
  inline static std::atomic<int> loads{0};

  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest& request) override {
    ++loads;
    const std::filesystem::path file = request.version_dir / model_filename();
    if (!std::filesystem::exists(file)) return absl::NotFoundError(file.string() + ": missing");
    if (make_model_) return make_model_(request);
    DataType output_type = DataType::kFp32;
    if (auto it = request.config->parameters.find("output_datatype");
        it != request.config->parameters.end()) {
      const std::optional<DataType> parsed = ParseDataType(it->second);
      if (!parsed) return absl::InvalidArgumentError("output_datatype: unknown datatype");
      output_type = *parsed;
    }
    return std::make_unique<DoublingModel>(output_type);
  }

 private:
  const ModelFactory make_model_;
};

}  // namespace inferd::testing

#endif  // INFERD_CORE_TESTING_FAKE_BACKEND_H_

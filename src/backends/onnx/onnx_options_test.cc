#include "backends/onnx/onnx_options.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

constexpr char kPath[] = "m/config.yaml";

// Parsed from YAML, as the server does (assigning literals to a default-constructed
// ModelConfig's strings trips GCC 12's -Wrestrict false positive at -O3).
ModelConfig Config(std::map<std::string, std::string> parameters = {}) {
  absl::StatusOr<ModelConfig> config = ParseModelConfig(R"(
backend: onnx
inputs:
  - {name: x, datatype: FP32, dims: [4]}
outputs:
  - {name: y, datatype: FP32, dims: [1]}
)",
                                                        "m", kPath);
  EXPECT_TRUE(config.ok()) << config.status();
  config->parameters = std::move(parameters);
  return *config;
}

TEST(OnnxOptionsTest, DefaultsAreOrtDefaultsExceptSpinning) {
  absl::StatusOr<OnnxModelOptions> options = ParseOnnxModelOptions(Config(), kPath);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->optimization, GraphOptimization::kAll);
  EXPECT_EQ(options->intra_op_threads, 0);
  EXPECT_EQ(options->inter_op_threads, 1);
  EXPECT_FALSE(options->allow_spinning);
}

TEST(OnnxOptionsTest, ParsesEveryParameter) {
  absl::StatusOr<OnnxModelOptions> options =
      ParseOnnxModelOptions(Config({{"graph_optimization_level", "basic"},
                                    {"intra_op_threads", "3"},
                                    {"inter_op_threads", "2"},
                                    {"allow_spinning", "true"}}),
                            kPath);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->optimization, GraphOptimization::kBasic);
  EXPECT_EQ(options->intra_op_threads, 3);
  EXPECT_EQ(options->inter_op_threads, 2);
  EXPECT_TRUE(options->allow_spinning);
}

TEST(OnnxOptionsTest, RejectsBadValuesNamingTheField) {
  absl::StatusOr<OnnxModelOptions> level =
      ParseOnnxModelOptions(Config({{"graph_optimization_level", "max"}}), kPath);
  EXPECT_THAT(level.status().message(),
              HasSubstr("parameters.graph_optimization_level: must be disabled, basic, "
                        "extended or all, got 'max'"));
  absl::StatusOr<OnnxModelOptions> threads =
      ParseOnnxModelOptions(Config({{"intra_op_threads", "two"}}), kPath);
  EXPECT_THAT(threads.status().message(), HasSubstr("parameters.intra_op_threads"));
  absl::StatusOr<OnnxModelOptions> unknown =
      ParseOnnxModelOptions(Config({{"freeze", "true"}}), kPath);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("parameters.freeze: unknown parameter for backend 'onnx'"));
}

TEST(OnnxOptionsTest, ExecutionProviderIsCpuByDefaultAndParsesCuda) {
  absl::StatusOr<OnnxModelOptions> defaults = ParseOnnxModelOptions(Config(), kPath);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->execution_provider, ExecutionProvider::kCpu);
  absl::StatusOr<OnnxModelOptions> cpu =
      ParseOnnxModelOptions(Config({{"execution_provider", "cpu"}}), kPath);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->execution_provider, ExecutionProvider::kCpu);
  absl::StatusOr<OnnxModelOptions> cuda =
      ParseOnnxModelOptions(Config({{"execution_provider", "cuda"}}), kPath);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->execution_provider, ExecutionProvider::kCuda);
}

TEST(OnnxOptionsTest, RejectsAnUnknownExecutionProviderAtParse) {
  for (const char* value : {"tensorrt", "CUDA", "gpu", ""}) {
    absl::StatusOr<OnnxModelOptions> options =
        ParseOnnxModelOptions(Config({{"execution_provider", value}}), kPath);
    ASSERT_FALSE(options.ok()) << value;
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(options.status().message(),
                HasSubstr(std::string("m/config.yaml: parameters.execution_provider: must be cpu "
                                      "or cuda, got '") +
                          value + "'"));
  }
}

TEST(OnnxOptionsTest, CudaProviderIsRefusedWhereTheLibraryLacksIt) {
  OnnxModelOptions options;
  const std::vector<std::string> cpu_build = {"CPUExecutionProvider"};
  EXPECT_TRUE(CheckExecutionProvider(options, cpu_build, "1.23.2", kPath).ok());
  options.execution_provider = ExecutionProvider::kCuda;
  absl::Status status = CheckExecutionProvider(options, cpu_build, "1.23.2", kPath);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("m/config.yaml: parameters.execution_provider: cuda: this server's ONNX "
                        "Runtime 1.23.2 has no CUDAExecutionProvider (it offers "
                        "CPUExecutionProvider)"));
  EXPECT_THAT(CheckExecutionProvider(options, {}, "1.23.2", kPath).message(),
              HasSubstr("(it offers none)"));
}

TEST(OnnxOptionsTest, CudaProviderIsNotYetServedEvenWhereTheLibraryHasIt) {
  OnnxModelOptions options;
  options.execution_provider = ExecutionProvider::kCuda;
  absl::Status status = CheckExecutionProvider(
      options, {"CUDAExecutionProvider", "CPUExecutionProvider"}, "1.23.2", kPath);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("inferd does not yet place ONNX sessions on a GPU"));
}

TEST(OnnxOptionsTest, ServesFp32AndInt8OnCpuOnly) {
  ModelConfig config = Config();
  EXPECT_TRUE(CheckOnnxPrecisionAndDevices(config, kPath).ok());
  config.precision = Precision::kInt8;
  EXPECT_TRUE(CheckOnnxPrecisionAndDevices(config, kPath).ok());
  for (Precision p : {Precision::kFp16, Precision::kBf16}) {
    config.precision = p;
    absl::Status status = CheckOnnxPrecisionAndDevices(config, kPath);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("is not supported by backend 'onnx' on device cpu"));
  }
  config.precision = Precision::kFp32;
  config.instances[0].device = "cuda:0";
  EXPECT_THAT(CheckOnnxPrecisionAndDevices(config, kPath).message(),
              HasSubstr("device 'cuda:0': this build's ONNX Runtime is the CPU library"));
}

TEST(OnnxOptionsTest, Int8NeedsAQuantizedFileAndAQuantizedFileNeedsInt8) {
  ModelConfig config = Config();
  EXPECT_TRUE(CheckQuantizedModel(config, "pytorch", "", "m/1/model.onnx").ok());
  EXPECT_THAT(CheckQuantizedModel(config, "onnx.quantize", "", "m/1/model.onnx").message(),
              HasSubstr("declare `precision: int8`"));
  config.precision = Precision::kInt8;
  EXPECT_TRUE(CheckQuantizedModel(config, "onnx.quantize", "", "m/1/model.onnx").ok());
  EXPECT_TRUE(CheckQuantizedModel(config, "pytorch", "int8", "m/1/model.onnx").ok());
  EXPECT_THAT(CheckQuantizedModel(config, "pytorch", "fp32", "m/1/model.onnx").message(),
              HasSubstr("declares precision int8 but this is not a quantized model"));
}

}  // namespace
}  // namespace inferd

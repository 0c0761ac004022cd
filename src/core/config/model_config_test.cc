#include "core/config/model_config.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

constexpr char kSource[] = "models/m/config.yaml";

absl::StatusOr<ModelConfig> Parse(const std::string& yaml) {
  return ParseModelConfig(yaml, "m", kSource);
}

// The error message of parsing `yaml`, which must fail with InvalidArgument.
std::string ErrorOf(const std::string& yaml) {
  absl::StatusOr<ModelConfig> config = Parse(yaml);
  EXPECT_FALSE(config.ok()) << "parsed unexpectedly:\n" << yaml;
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

constexpr char kMinimalOutputs[] = R"(
outputs:
  - {name: y, datatype: FP32, dims: [1]}
)";

std::string WithInputs(const std::string& inputs) {
  return "backend: torch\ninputs:\n" + inputs + kMinimalOutputs;
}

TEST(ModelConfigTest, ParsesFullConfig) {
  absl::StatusOr<ModelConfig> config = Parse(R"(
backend: torch
max_batch_size: 8
inputs:
  - name: features
    datatype: FP32
    dims: [256]
  - name: mask
    datatype: BOOL
    dims: [-1, 4]
outputs:
  - name: score
    datatype: FP64
    dims: [1]
instances:
  - count: 2
    device: cpu
  - count: 1
parameters:
  intra_op_threads: 4
  mode: eval
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name, "m");
  EXPECT_EQ(config->backend, "torch");
  EXPECT_EQ(config->max_batch_size, 8);
  EXPECT_TRUE(config->batched());
  ASSERT_EQ(config->inputs.size(), 2u);
  EXPECT_EQ(config->inputs[0].name, "features");
  EXPECT_EQ(config->inputs[0].datatype, DataType::kFp32);
  EXPECT_THAT(config->inputs[0].dims, ElementsAre(256));
  EXPECT_EQ(config->inputs[1].name, "mask");
  EXPECT_EQ(config->inputs[1].datatype, DataType::kBool);
  EXPECT_THAT(config->inputs[1].dims, ElementsAre(-1, 4));
  ASSERT_EQ(config->outputs.size(), 1u);
  EXPECT_EQ(config->outputs[0].name, "score");
  EXPECT_EQ(config->outputs[0].datatype, DataType::kFp64);
  EXPECT_THAT(config->outputs[0].dims, ElementsAre(1));
  ASSERT_EQ(config->instances.size(), 2u);
  EXPECT_EQ(config->instances[0].count, 2);
  EXPECT_EQ(config->instances[0].device, "cpu");
  EXPECT_EQ(config->instances[1].count, 1);
  EXPECT_EQ(config->instances[1].device, "cpu");
  EXPECT_THAT(config->parameters, ElementsAre(Pair("intra_op_threads", "4"), Pair("mode", "eval")));
  EXPECT_EQ(config->FindInput("mask"), &config->inputs[1]);
  EXPECT_EQ(config->FindInput("score"), nullptr);
  EXPECT_EQ(config->FindOutput("score"), &config->outputs[0]);
  EXPECT_EQ(config->FindOutput("features"), nullptr);
}

TEST(ModelConfigTest, DefaultsToOneCpuInstanceNoBatchingAndNoParameters) {
  absl::StatusOr<ModelConfig> config =
      Parse(WithInputs("  - {name: x, datatype: INT64, dims: [3]}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size, 0);
  EXPECT_FALSE(config->batched());
  ASSERT_EQ(config->instances.size(), 1u);
  EXPECT_EQ(config->instances[0].count, 1);
  EXPECT_EQ(config->instances[0].device, "cpu");
  EXPECT_THAT(config->parameters, IsEmpty());
}

TEST(ModelConfigTest, AcceptsEmptyParameters) {
  absl::StatusOr<ModelConfig> config =
      Parse(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") + "parameters:\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->parameters, IsEmpty());
}

TEST(ModelConfigTest, FullShapePrependsBatchDimensionOnlyWhenBatched) {
  ModelConfig config;
  TensorSpec spec{"x", DataType::kFp32, {3, -1}};
  EXPECT_THAT(config.FullShape(spec), ElementsAre(3, -1));
  config.max_batch_size = 4;
  EXPECT_THAT(config.FullShape(spec), ElementsAre(-1, 3, -1));
  spec.dims.clear();
  EXPECT_THAT(config.FullShape(spec), ElementsAre(-1));
}

TEST(ModelConfigTest, RefusesMoreExecutionInstancesThanAModelMayHave) {
  const std::string base = WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n");
  EXPECT_THAT(ErrorOf(base + "instances: [{count: 100000}]\n"),
              HasSubstr("instances[0].count: must be 1..64, got 100000"));
  EXPECT_THAT(ErrorOf(base + "instances: [{count: 64}, {count: 64}]\n"),
              HasSubstr("128 execution instances in all; a model may have at most 64"));
  EXPECT_TRUE(Parse(base + "instances: [{count: 32}, {count: 32}]\n").ok());
}

TEST(ModelConfigTest, RejectsUnknownTopLevelKey) {
  EXPECT_THAT(
      ErrorOf("max_batchsize: 4\n" + WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n")),
      AllOf(StartsWith(kSource), HasSubstr("max_batchsize: unknown field"),
            HasSubstr("max_batch_size")));
}

TEST(ModelConfigTest, RejectsMissingBackend) {
  EXPECT_THAT(ErrorOf(R"(
inputs:
  - {name: x, datatype: FP32, dims: [1]}
outputs:
  - {name: y, datatype: FP32, dims: [1]}
)"),
              AllOf(StartsWith(kSource), HasSubstr("backend: is required")));
}

TEST(ModelConfigTest, RejectsEmptyBackend) {
  EXPECT_THAT(
      ErrorOf("backend: ''\n" + std::string("inputs:\n  - {name: x, datatype: FP32, dims: [1]}\n") +
              kMinimalOutputs),
      AllOf(StartsWith(kSource), HasSubstr("backend: must be a non-empty string")));
}

// Left out, the signature is read from the model file at load (Triton's auto-complete), or
// the backend says what to add (model_loader.cc, config_completer.h).
TEST(ModelConfigTest, MissingInputsOrOutputsAreLeftToTheModelFile) {
  absl::StatusOr<ModelConfig> no_inputs = Parse(std::string("backend: onnx\n") + kMinimalOutputs);
  ASSERT_TRUE(no_inputs.ok()) << no_inputs.status();
  EXPECT_THAT(no_inputs->inputs, IsEmpty());
  EXPECT_EQ(no_inputs->outputs.size(), 1u);
  absl::StatusOr<ModelConfig> bare = Parse("backend: onnx\n");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_THAT(bare->inputs, IsEmpty());
  EXPECT_THAT(bare->outputs, IsEmpty());
  EXPECT_EQ(bare->max_batch_size, 0);
}

TEST(ModelConfigTest, RejectsEmptyInputList) {
  EXPECT_THAT(ErrorOf(std::string("backend: torch\ninputs: []\n") + kMinimalOutputs),
              AllOf(StartsWith(kSource), HasSubstr("inputs: must be a non-empty list")));
}

TEST(ModelConfigTest, RejectsUnknownDatatypeAndListsTheKnownOnes) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP33, dims: [1]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].datatype: 'FP33' is not a datatype"),
                    HasSubstr("BOOL"), HasSubstr("FP32"), HasSubstr("BF16"), HasSubstr("UINT64")));
}

TEST(ModelConfigTest, RejectsZeroDimension) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [2, 0]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims[1]"),
                    HasSubstr("must be a positive size or -1"), HasSubstr("got 0")));
}

TEST(ModelConfigTest, RejectsNegativeDimensionOtherThanMinusOne) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [-2]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims[0]"), HasSubstr("got -2")));
}

TEST(ModelConfigTest, RejectsNonIntegerDimensions) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [abc]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims[0]: must be an integer"),
                    HasSubstr("'abc'")));
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [4, 1.5]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims[1]: must be an integer"),
                    HasSubstr("'1.5'")));
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: 4}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims: must be a list of integers")));
}

// YAML integers with a leading zero: yaml-cpp's integer conversion auto-detects the base,
// so "010" would silently become 8 (and "08" is refused as "not an integer"). A config
// must mean what it says: 010 is either rejected or ten, never eight.
TEST(ModelConfigTest, DoesNotReadLeadingZeroIntegersAsOctal) {
  absl::StatusOr<ModelConfig> config =
      Parse(WithInputs("  - {name: x, datatype: FP32, dims: [010]}\n"));
  if (config.ok()) {
    EXPECT_THAT(config->inputs[0].dims, ElementsAre(10)) << "dims: [010] was read as octal";
  }
  config =
      Parse("max_batch_size: 010\n" + WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n"));
  if (config.ok()) {
    EXPECT_EQ(config->max_batch_size, 10) << "max_batch_size: 010 was read as octal";
  }
}

TEST(ModelConfigTest, RejectsDuplicateInputName) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n"
                                 "  - {name: x, datatype: INT64, dims: [1]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[1].name: 'x' is declared twice")));
}

TEST(ModelConfigTest, RejectsUnknownKeyInsideInput) {
  EXPECT_THAT(
      ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1], shape: [1]}\n")),
      AllOf(StartsWith(kSource), HasSubstr("inputs[0].shape: unknown field"), HasSubstr("dims")));
}

TEST(ModelConfigTest, RejectsInputWithoutDims) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims: is required")));
}

TEST(ModelConfigTest, RejectsNegativeMaxBatchSize) {
  EXPECT_THAT(
      ErrorOf("max_batch_size: -1\n" + WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n")),
      AllOf(StartsWith(kSource), HasSubstr("max_batch_size: must be 0"), HasSubstr("got -1")));
}

TEST(ModelConfigTest, RejectsNonIntegerMaxBatchSize) {
  EXPECT_THAT(
      ErrorOf("max_batch_size: lots\n" + WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n")),
      AllOf(StartsWith(kSource), HasSubstr("max_batch_size: must be an integer")));
}

TEST(ModelConfigTest, RejectsZeroInstanceCount) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") +
                      "instances:\n  - count: 0\n"),
              AllOf(StartsWith(kSource), HasSubstr("instances[0].count: must be 1..64, got 0")));
}

TEST(ModelConfigTest, AcceptsCudaDevicesInCanonicalForm) {
  // Whether the device exists is the backend's question at load time, not the parser's.
  absl::StatusOr<ModelConfig> config =
      Parse(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") +
            "instances:\n  - {count: 2, device: cuda}\n  - {count: 1, device: 'cuda:0'}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->instances[0].device, "cuda:0");
  EXPECT_EQ(config->instances[1].device, "cuda:0");
}

TEST(ModelConfigTest, RejectsMalformedDevice) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") +
                      "instances:\n  - {count: 1, device: 'tpu:0'}\n"),
              AllOf(StartsWith(kSource), HasSubstr("instances[0].device: 'tpu:0' is not a device"),
                    HasSubstr("'cuda:N'")));
}

TEST(ModelConfigTest, RejectsInstancesOnTwoDevices) {
  EXPECT_THAT(
      ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") +
              "instances:\n  - {count: 1, device: cpu}\n  - {count: 1, device: 'cuda:1'}\n"),
      AllOf(StartsWith(kSource), HasSubstr("instances[1].device: 'cuda:1' differs from "
                                           "instances[0].device 'cpu'")));
}

TEST(ModelConfigTest, RejectsParametersThatAreNotAMapping) {
  EXPECT_THAT(
      ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") + "parameters: [a, b]\n"),
      AllOf(StartsWith(kSource), HasSubstr("parameters: must be a mapping")));
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") + "parameters: 5\n"),
              AllOf(StartsWith(kSource), HasSubstr("parameters: must be a mapping")));
}

TEST(ModelConfigTest, RejectsParameterWithNestedValue) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") +
                      "parameters:\n  threads: [1, 2]\n"),
              AllOf(StartsWith(kSource), HasSubstr("parameters.threads: must be a single value")));
}

TEST(ModelConfigTest, RejectsInvalidYamlWithLineNumber) {
  EXPECT_THAT(ErrorOf("backend: torch\ninputs:\n  - {name: x, datatype: FP32, dims: [1]\n"),
              AllOf(StartsWith(std::string(kSource) + ": line "), HasSubstr("not valid YAML")));
  // The stray ']' is on line 3.
  EXPECT_THAT(ErrorOf("backend: torch\nmax_batch_size: 4\nparameters: {a: 1]\n"),
              AllOf(StartsWith(std::string(kSource) + ": line 3"), HasSubstr("not valid YAML")));
}

TEST(ModelConfigTest, RejectsEmptyFile) {
  EXPECT_THAT(ErrorOf(""), AllOf(StartsWith(kSource), HasSubstr("empty")));
  EXPECT_THAT(ErrorOf("# only a comment\n"), AllOf(StartsWith(kSource), HasSubstr("empty")));
}

TEST(ModelConfigTest, RejectsTopLevelThatIsNotAMapping) {
  EXPECT_THAT(ErrorOf("- backend\n- torch\n"),
              AllOf(StartsWith(kSource), HasSubstr("must be a mapping")));
}

// --- dynamic_batching and queue ---------------------------------------------------------

constexpr char kOneInput[] = "  - {name: x, datatype: FP32, dims: [4]}\n";

// A batching model (max_batch_size 8) with `extra` appended.
std::string Batched(const std::string& extra) {
  return "max_batch_size: 8\n" + WithInputs(kOneInput) + extra;
}

TEST(ModelConfigTest, ParsesDynamicBatchingAndQueue) {
  absl::StatusOr<ModelConfig> config = Parse(Batched(R"(
dynamic_batching:
  max_queue_delay_us: 2000
  preferred_batch_sizes: [2, 4, 8]
  preserve_ordering: true
  auto_tune: true
  latency_slo_ms: 12.5
queue:
  priority_levels: 3
  default_priority_level: 2
  max_queue_size: 100
  default_timeout_us: 5000
  timeout_status: 429
)"));
  ASSERT_TRUE(config.ok()) << config.status();
  const DynamicBatchingConfig& batching = config->dynamic_batching;
  EXPECT_TRUE(batching.enabled);
  EXPECT_EQ(batching.max_queue_delay_us, 2000);
  EXPECT_THAT(batching.preferred_batch_sizes, ElementsAre(2, 4, 8));
  EXPECT_TRUE(batching.preserve_ordering);
  EXPECT_TRUE(batching.auto_tune);
  EXPECT_DOUBLE_EQ(batching.latency_slo_ms, 12.5);
  const QueueConfig& queue = config->queue;
  EXPECT_EQ(queue.priority_levels, 3);
  EXPECT_EQ(queue.default_priority_level, 2);
  EXPECT_EQ(queue.default_priority(), 2);
  EXPECT_EQ(queue.max_queue_size, 100);
  EXPECT_EQ(queue.default_timeout_us, 5000);
  EXPECT_EQ(queue.timeout_code, absl::StatusCode::kResourceExhausted);
}

TEST(ModelConfigTest, WithoutSectionsABatchedModelBatchesWithNoDelayAndTheQueueIsUnbounded) {
  absl::StatusOr<ModelConfig> config = Parse(Batched(""));
  ASSERT_TRUE(config.ok()) << config.status();
  const DynamicBatchingConfig& batching = config->dynamic_batching;
  EXPECT_TRUE(batching.enabled);
  EXPECT_TRUE(batching.by_default);
  EXPECT_EQ(batching.max_queue_delay_us, 0);
  EXPECT_THAT(batching.preferred_batch_sizes, IsEmpty());
  EXPECT_FALSE(batching.preserve_ordering);
  EXPECT_FALSE(batching.auto_tune);
  EXPECT_DOUBLE_EQ(batching.latency_slo_ms, 100);
  const QueueConfig& queue = config->queue;
  EXPECT_EQ(queue.priority_levels, 1);
  EXPECT_EQ(queue.default_priority(), 1);
  EXPECT_EQ(queue.max_queue_size, 0);
  EXPECT_EQ(queue.default_timeout_us, 0);
  EXPECT_EQ(queue.timeout_code, absl::StatusCode::kDeadlineExceeded);
}

TEST(ModelConfigTest, EmptyDynamicBatchingMappingEnablesItWithDefaults) {
  absl::StatusOr<ModelConfig> config = Parse(Batched("dynamic_batching: {}\nqueue: {}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->dynamic_batching.enabled);
  EXPECT_EQ(config->dynamic_batching.max_queue_delay_us, 0);
  EXPECT_EQ(config->queue.priority_levels, 1);
}

// "present = enabled" (model_config.h): a bare `dynamic_batching:` is present too, as a bare
// `parameters:` is accepted as empty.
TEST(ModelConfigTest, BareDynamicBatchingKeyEnablesItWithDefaults) {
  absl::StatusOr<ModelConfig> config = Parse(Batched("dynamic_batching:\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->dynamic_batching.enabled);
}

TEST(ModelConfigTest, AModelWithoutBatchDimensionGetsNoDefaultBatching) {
  absl::StatusOr<ModelConfig> config = Parse(R"(
backend: torch
inputs: [{name: x, datatype: FP32, dims: [4]}]
outputs: [{name: y, datatype: FP32, dims: [2]}]
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->dynamic_batching.enabled);
  EXPECT_FALSE(config->dynamic_batching.by_default);
}

TEST(ModelConfigTest, AWrittenSectionIsNotTheDefault) {
  absl::StatusOr<ModelConfig> config =
      Parse(Batched("dynamic_batching: {max_queue_delay_us: 500}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->dynamic_batching.enabled);
  EXPECT_FALSE(config->dynamic_batching.by_default);
  EXPECT_EQ(config->dynamic_batching.max_queue_delay_us, 500);
}

TEST(ModelConfigTest, EnabledFalseTurnsBatchingOff) {
  absl::StatusOr<ModelConfig> config = Parse(Batched("dynamic_batching: {enabled: false}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->dynamic_batching.enabled);
  EXPECT_FALSE(config->dynamic_batching.by_default);
  EXPECT_FALSE(config->dynamic_batching.auto_tune);
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {enabled: false, auto_tune: true}\n")),
              HasSubstr("dynamic_batching: enabled: false takes no other settings"));
}

TEST(ModelConfigTest, ExplicitDynamicBatchingIsKeptAsWritten) {
  absl::StatusOr<ModelConfig> config = Parse(Batched("dynamic_batching: {}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->dynamic_batching.enabled);
  EXPECT_FALSE(config->dynamic_batching.auto_tune);
}

TEST(ModelConfigTest, DefaultPriorityIsTheLowestLevel) {
  absl::StatusOr<ModelConfig> config = Parse(Batched("queue: {priority_levels: 4}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->queue.default_priority_level, 0);
  EXPECT_EQ(config->queue.default_priority(), 4);
}

TEST(ModelConfigTest, DefaultPriorityLevelIsCheckedWhateverTheKeyOrder) {
  absl::StatusOr<ModelConfig> config =
      Parse(Batched("queue: {default_priority_level: 3, priority_levels: 4}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->queue.default_priority(), 3);
  EXPECT_THAT(ErrorOf(Batched("queue: {default_priority_level: 3, priority_levels: 2}\n")),
              AllOf(StartsWith(kSource), HasSubstr("queue.default_priority_level: must be in 1..2"),
                    HasSubstr("got 3")));
}

TEST(ModelConfigTest, RejectsPreferredBatchSizesNotIncreasing) {
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {preferred_batch_sizes: [4, 2]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("dynamic_batching.preferred_batch_sizes"),
                    HasSubstr("must be increasing")));
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {preferred_batch_sizes: [2, 2]}\n")),
              HasSubstr("must be increasing, without repeats"));
}

TEST(ModelConfigTest, RejectsPreferredBatchSizeAboveMaxBatchSize) {
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {preferred_batch_sizes: [4, 16]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("dynamic_batching.preferred_batch_sizes[1]"),
                    HasSubstr("must be in 1..8, got 16")));
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {preferred_batch_sizes: [0]}\n")),
              HasSubstr("preferred_batch_sizes[0]: must be in 1..8, got 0"));
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {preferred_batch_sizes: 4}\n")),
              HasSubstr("preferred_batch_sizes: must be a list"));
}

TEST(ModelConfigTest, RejectsDynamicBatchingWithoutBatchDimension) {
  EXPECT_THAT(ErrorOf(WithInputs(kOneInput) + "dynamic_batching: {max_queue_delay_us: 100}\n"),
              AllOf(StartsWith(kSource), HasSubstr("dynamic_batching: needs max_batch_size > 0")));
  EXPECT_THAT(ErrorOf("max_batch_size: 0\n" + WithInputs(kOneInput) + "dynamic_batching: {}\n"),
              HasSubstr("needs max_batch_size > 0"));
}

TEST(ModelConfigTest, RejectsTimeoutStatusOtherThan504Or429) {
  EXPECT_THAT(ErrorOf(Batched("queue: {timeout_status: 500}\n")),
              AllOf(StartsWith(kSource), HasSubstr("queue.timeout_status: must be 504 or 429"),
                    HasSubstr("got 500")));
}

TEST(ModelConfigTest, BusyPollComesFromTheServerUnlessTheConfigSetsIt) {
  const ConfigDefaults defaults{.busy_poll_us = 100};
  absl::StatusOr<ModelConfig> config = ParseModelConfig(Batched(""), "m", kSource, defaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->queue.busy_poll_us, 100);
  config = ParseModelConfig(Batched("queue: {busy_poll_us: 0}\n"), "m", kSource, defaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->queue.busy_poll_us, 0);
  EXPECT_THAT(ErrorOf(Batched("queue: {busy_poll_us: 20000}\n")),
              HasSubstr("queue.busy_poll_us: must be in 0..10000, got 20000"));
}

TEST(ModelConfigTest, RejectsUnknownKeysInBatchingSections) {
  EXPECT_THAT(ErrorOf(Batched("queue: {max_size: 3}\n")),
              AllOf(StartsWith(kSource), HasSubstr("queue.max_size: unknown field"),
                    HasSubstr("max_queue_size")));
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {max_delay_us: 3}\n")),
              AllOf(StartsWith(kSource), HasSubstr("dynamic_batching.max_delay_us: unknown field"),
                    HasSubstr("max_queue_delay_us")));
  EXPECT_THAT(ErrorOf(Batched("queue: [1, 2]\n")), HasSubstr("queue: must be a mapping"));
}

TEST(ModelConfigTest, RejectsOutOfRangeBatchingAndQueueValues) {
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {max_queue_delay_us: -1}\n")),
              HasSubstr("dynamic_batching.max_queue_delay_us: must be in 0.."));
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {latency_slo_ms: 0}\n")),
              HasSubstr("dynamic_batching.latency_slo_ms: must be positive"));
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {latency_slo_ms: fast}\n")),
              HasSubstr("dynamic_batching.latency_slo_ms: must be a number"));
  EXPECT_THAT(ErrorOf(Batched("dynamic_batching: {preserve_ordering: yes}\n")),
              HasSubstr("dynamic_batching.preserve_ordering: must be true or false"));
  EXPECT_THAT(ErrorOf(Batched("queue: {priority_levels: 0}\n")),
              HasSubstr("queue.priority_levels: must be in 1..16, got 0"));
  EXPECT_THAT(ErrorOf(Batched("queue: {max_queue_size: -5}\n")),
              HasSubstr("queue.max_queue_size: must be in 0.."));
  EXPECT_THAT(ErrorOf(Batched("queue: {default_timeout_us: -1}\n")),
              HasSubstr("queue.default_timeout_us: must be in 0.."));
}

// --- defaults from the environment (BATCH_SIZE, MAX_WORKERS) -----------------------------

TEST(ModelConfigTest, ConfigDefaultsFillFieldsTheConfigLeavesOut) {
  const ConfigDefaults defaults{.max_batch_size = 16, .instance_count = 3};
  absl::StatusOr<ModelConfig> config =
      ParseModelConfig(WithInputs(kOneInput), "m", kSource, defaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size, 16);
  EXPECT_TRUE(config->batched());
  ASSERT_EQ(config->instances.size(), 1u);
  EXPECT_EQ(config->instances[0].count, 3);
  EXPECT_EQ(config->instances[0].device, "cpu");
  EXPECT_EQ(config->total_instances(), 3);
}

TEST(ModelConfigTest, ConfigValuesWinOverDefaults) {
  const ConfigDefaults defaults{.max_batch_size = 16, .instance_count = 3};
  absl::StatusOr<ModelConfig> config =
      ParseModelConfig("max_batch_size: 0\n" + WithInputs(kOneInput) + "instances:\n  - count: 2\n",
                       "m", kSource, defaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size, 0);  // explicitly unbatched
  EXPECT_EQ(config->total_instances(), 2);

  config = ParseModelConfig(Batched(""), "m", kSource, defaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size, 8);
}

TEST(ModelConfigTest, DynamicBatchingMayRelyOnTheDefaultMaxBatchSize) {
  const std::string yaml =
      WithInputs(kOneInput) + "dynamic_batching: {preferred_batch_sizes: [4, 16]}\n";
  absl::StatusOr<ModelConfig> config =
      ParseModelConfig(yaml, "m", kSource, ConfigDefaults{.max_batch_size = 16});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->dynamic_batching.enabled);
  EXPECT_THAT(config->dynamic_batching.preferred_batch_sizes, ElementsAre(4, 16));
  // Without the default there is no batch dimension to batch along.
  EXPECT_THAT(ErrorOf(yaml), HasSubstr("needs max_batch_size > 0"));
}

TEST(ModelConfigTest, NoDefaultsMeansUnbatchedWithOneInstance) {
  absl::StatusOr<ModelConfig> config =
      ParseModelConfig(WithInputs(kOneInput), "m", kSource, ConfigDefaults{});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size, 0);
  EXPECT_EQ(config->total_instances(), 1);
}

TEST(ModelConfigTest, ExampleShapeHasTheBatchAndOneForVariableDimensions) {
  ModelConfig config;
  const TensorSpec spec{"x", DataType::kFp32, {3, -1}};
  EXPECT_THAT(config.ExampleShape(spec, 5), ElementsAre(3, 1));  // unbatched: no batch
  config.max_batch_size = 8;
  EXPECT_THAT(config.ExampleShape(spec, 5), ElementsAre(5, 3, 1));
}

TEST(ModelConfigTest, ALlamaModelDeclaresTextInAndTextOut) {
  absl::StatusOr<ModelConfig> config =
      ParseModelConfig("backend: llama\nparameters:\n  parallel: 2\n", "chat", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->inputs.size(), 1u);
  EXPECT_EQ(config->inputs[0].name, "text_input");
  EXPECT_EQ(config->inputs[0].datatype, DataType::kBytes);
  ASSERT_EQ(config->outputs.size(), 1u);
  EXPECT_EQ(config->outputs[0].name, "text_output");
  EXPECT_EQ(config->parameters.at("parallel"), "2");
}

TEST(ModelConfigTest, ALlamaModelRefusesTheSchedulersQueueLimitNamingItsOwn) {
  absl::StatusOr<ModelConfig> config = ParseModelConfig(
      "backend: llama\nqueue: {max_queue_size: 4}\nparameters:\n  parallel: 2\n", "chat", kSource);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()),
              AllOf(HasSubstr("queue.max_queue_size"), HasSubstr("parameters.max_queue")));
}

}  // namespace
}  // namespace inferd

namespace inferd {
namespace {

std::string WithCache(const std::string& cache) {
  return WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") + "response_cache: " + cache +
         "\n";
}

TEST(ModelConfigResponseCacheTest, AbsentMeansNoCache) {
  absl::StatusOr<ModelConfig> config =
      Parse(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->response_cache.enabled());
}

TEST(ModelConfigResponseCacheTest, ParsesTheBoundAndPerTenantDefaultsToTrue) {
  absl::StatusOr<ModelConfig> config = Parse(WithCache("{max_bytes: 1048576}"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->response_cache.max_bytes, 1048576u);
  EXPECT_TRUE(config->response_cache.per_tenant);
  config = Parse(WithCache("{max_bytes: 1048576, per_tenant: false}"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->response_cache.per_tenant);
}

TEST(ModelConfigResponseCacheTest, ErrorsNameTheField) {
  EXPECT_THAT(ErrorOf(WithCache("{}")), HasSubstr("response_cache.max_bytes: is required"));
  EXPECT_THAT(ErrorOf(WithCache("{max_bytes: 10}")),
              HasSubstr("response_cache.max_bytes: must be in 65536.."));
  EXPECT_THAT(ErrorOf(WithCache("{max_bytes: 1048576, ttl: 5}")),
              HasSubstr("response_cache.ttl: unknown field"));
  EXPECT_THAT(ErrorOf("backend: llama\nresponse_cache: {max_bytes: 1048576}\n"),
              HasSubstr("response_cache: a language model's answers are sampled"));
}

}  // namespace
}  // namespace inferd

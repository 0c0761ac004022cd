#include "backends/onnx/onnx_signature.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kPath[] = "m/config.yaml";

// Parsed from YAML, as the server does (assigning literals to a default-constructed
// ModelConfig's strings trips GCC 12's -Wrestrict false positive at -O3).
ModelConfig BatchedConfig() {
  absl::StatusOr<ModelConfig> config = ParseModelConfig(R"(
backend: onnx
max_batch_size: 8
inputs:
  - {name: pixels, datatype: FP32, dims: [64]}
outputs:
  - {name: probabilities, datatype: FP32, dims: [10]}
)",
                                                        "m", kPath);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

GraphSignature MatchingGraph() {
  GraphSignature graph;
  graph.inputs = {{"pixels", DataType::kFp32, "float", {-1, 64}}};
  graph.outputs = {{"probabilities", DataType::kFp32, "float", {-1, 10}}};
  return graph;
}

std::string ErrorOf(const ModelConfig& config, const GraphSignature& graph) {
  absl::Status status = CheckGraphSignature(config, graph, kPath);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

TEST(OnnxSignatureTest, AcceptsMatchingGraphWithDynamicBatch) {
  EXPECT_TRUE(CheckGraphSignature(BatchedConfig(), MatchingGraph(), kPath).ok());
}

TEST(OnnxSignatureTest, MatchesByNameNotPosition) {
  ModelConfig config = BatchedConfig();
  config.inputs = {{"b", DataType::kInt64, {4}}, {"a", DataType::kFp32, {2}}};
  GraphSignature graph = MatchingGraph();
  graph.inputs = {{"a", DataType::kFp32, "float", {-1, 2}},
                  {"b", DataType::kInt64, "int64", {-1, 4}}};
  EXPECT_TRUE(CheckGraphSignature(config, graph, kPath).ok());
}

TEST(OnnxSignatureTest, RejectsUnknownInputNameListingTheGraphsNames) {
  ModelConfig config = BatchedConfig();
  config.inputs[0].name = "image";
  EXPECT_THAT(ErrorOf(config, MatchingGraph()),
              HasSubstr("m/config.yaml: inputs[0].name: the graph has no inputs named 'image' "
                        "(its inputs: pixels)"));
}

TEST(OnnxSignatureTest, RejectsDatatypeMismatch) {
  ModelConfig config = BatchedConfig();
  config.outputs[0].datatype = DataType::kFp64;
  EXPECT_THAT(ErrorOf(config, MatchingGraph()),
              HasSubstr("outputs[0].datatype: FP64, but the graph's 'probabilities' is FP32"));
}

TEST(OnnxSignatureTest, RejectsFixedBatchDimensionWhenBatching) {
  GraphSignature graph = MatchingGraph();
  graph.inputs[0].dims = {1, 64};
  EXPECT_THAT(ErrorOf(BatchedConfig(), graph),
              HasSubstr("fixes the first dimension of 'pixels' at 1; export with a dynamic "
                        "batch axis"));
}

TEST(OnnxSignatureTest, AcceptsFixedFirstDimensionWithoutBatching) {
  ModelConfig config = BatchedConfig();
  config.max_batch_size = 0;
  config.inputs[0].dims = {1, 64};
  config.outputs[0].dims = {1, 10};
  GraphSignature graph = MatchingGraph();
  graph.inputs[0].dims = {1, 64};
  graph.outputs[0].dims = {1, 10};
  EXPECT_TRUE(CheckGraphSignature(config, graph, kPath).ok());
}

TEST(OnnxSignatureTest, RejectsRankAndFixedDimensionMismatches) {
  GraphSignature graph = MatchingGraph();
  graph.inputs[0].dims = {-1, 8, 8};
  EXPECT_THAT(ErrorOf(BatchedConfig(), graph), HasSubstr("declares 2 dimensions"));
  graph = MatchingGraph();
  graph.outputs[0].dims = {-1, 7};
  EXPECT_THAT(ErrorOf(BatchedConfig(), graph),
              HasSubstr("outputs[0].dims: [10] but the graph's 'probabilities' is [-1, 7]"));
}

TEST(OnnxSignatureTest, VariableDimensionsMatchAnything) {
  ModelConfig config = BatchedConfig();
  config.inputs[0].dims = {-1};
  GraphSignature graph = MatchingGraph();
  EXPECT_TRUE(CheckGraphSignature(config, graph, kPath).ok());
}

TEST(OnnxSignatureTest, RejectsTypesTheProtocolCannotCarry) {
  GraphSignature graph = MatchingGraph();
  graph.inputs[0].type = std::nullopt;
  graph.inputs[0].type_name = "string";
  EXPECT_THAT(ErrorOf(BatchedConfig(), graph),
              HasSubstr("has element type string, which the protocol cannot carry"));
}

TEST(OnnxSignatureTest, RejectsCountMismatch) {
  GraphSignature graph = MatchingGraph();
  graph.outputs.push_back({"extra", DataType::kFp32, "float", {-1}});
  EXPECT_THAT(ErrorOf(BatchedConfig(), graph),
              HasSubstr("outputs: declares 1 but the graph has 2 (probabilities, extra)"));
}

ModelConfig Parsed(const char* yaml) {
  absl::StatusOr<ModelConfig> config = ParseModelConfig(yaml, "m", kPath);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(CompleteConfigFromGraphTest, FolderWithOnlyTheBackendGetsTheGraphsSignatureAndBatchAxis) {
  const ModelConfig config = Parsed("backend: onnx\n");
  EXPECT_TRUE(config.inputs.empty() && config.outputs.empty());
  absl::StatusOr<ModelConfig> completed = CompleteConfigFromGraph(config, MatchingGraph(), kPath);
  ASSERT_TRUE(completed.ok()) << completed.status();
  EXPECT_EQ(completed->max_batch_size, kCompletedMaxBatchSize);
  EXPECT_TRUE(completed->dynamic_batching.enabled && completed->dynamic_batching.by_default);
  EXPECT_FALSE(completed->dynamic_batching.auto_tune);
  EXPECT_EQ(completed->dynamic_batching.max_queue_delay_us, 0);
  ASSERT_EQ(completed->inputs.size(), 1u);
  EXPECT_EQ(completed->inputs[0].name, "pixels");
  EXPECT_EQ(completed->inputs[0].datatype, DataType::kFp32);
  EXPECT_EQ(completed->inputs[0].dims, (Shape{64}));
  ASSERT_EQ(completed->outputs.size(), 1u);
  EXPECT_EQ(completed->outputs[0].dims, (Shape{10}));
  EXPECT_TRUE(CheckGraphSignature(*completed, MatchingGraph(), kPath).ok());
}

TEST(CompleteConfigFromGraphTest, FixedFirstDimensionMeansNoBatchingWhenNotGiven) {
  GraphSignature graph = MatchingGraph();
  graph.inputs[0].dims = {1, 64};
  absl::StatusOr<ModelConfig> completed =
      CompleteConfigFromGraph(Parsed("backend: onnx\n"), graph, kPath);
  ASSERT_TRUE(completed.ok()) << completed.status();
  EXPECT_EQ(completed->max_batch_size, 0);
  EXPECT_FALSE(completed->dynamic_batching.enabled);
  EXPECT_EQ(completed->inputs[0].dims, (Shape{1, 64}));
  EXPECT_EQ(completed->outputs[0].dims, (Shape{-1, 10}));
}

TEST(CompleteConfigFromGraphTest, GivenMaxBatchSizeStripsTheBatchAxisAndKeepsDeclaredSide) {
  const ModelConfig config = Parsed(R"(
backend: onnx
max_batch_size: 4
outputs:
  - {name: probabilities, datatype: FP32, dims: [10]}
)");
  absl::StatusOr<ModelConfig> completed = CompleteConfigFromGraph(config, MatchingGraph(), kPath);
  ASSERT_TRUE(completed.ok()) << completed.status();
  EXPECT_EQ(completed->max_batch_size, 4);
  EXPECT_EQ(completed->inputs[0].dims, (Shape{64}));
  EXPECT_EQ(completed->outputs.size(), 1u);
}

TEST(CompleteConfigFromGraphTest, GivenMaxBatchSizeWithAFixedFirstDimensionSaysWhatToChange) {
  GraphSignature graph = MatchingGraph();
  graph.inputs[0].dims = {1, 64};
  absl::StatusOr<ModelConfig> completed =
      CompleteConfigFromGraph(Parsed("backend: onnx\nmax_batch_size: 8\n"), graph, kPath);
  ASSERT_FALSE(completed.ok());
  EXPECT_THAT(completed.status().message(),
              AllOf(HasSubstr("m/config.yaml: max_batch_size is 8"), HasSubstr("'pixels'"),
                    HasSubstr("max_batch_size: 0")));
}

TEST(CompleteConfigFromGraphTest, ElementTypeTheProtocolCannotCarryIsNamed) {
  GraphSignature graph = MatchingGraph();
  graph.inputs[0].type = std::nullopt;
  graph.inputs[0].type_name = "complex64";
  absl::StatusOr<ModelConfig> completed =
      CompleteConfigFromGraph(Parsed("backend: onnx\n"), graph, kPath);
  ASSERT_FALSE(completed.ok());
  EXPECT_THAT(completed.status().message(), AllOf(HasSubstr("inputs"), HasSubstr("complex64")));
}

}  // namespace
}  // namespace inferd

#include "core/config/pipeline_spec_parser.h"

#include <string>

#include "core/config/model_config.h"
#include "core/config/pipeline_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

constexpr char kHead[] = R"(backend: pipeline
max_batch_size: 4
inputs: [{name: image, datatype: BYTES, dims: [], content: image}]
outputs: [{name: top, datatype: BYTES, dims: [5]}]
)";

absl::StatusOr<ModelConfig> Parse(const std::string& pipeline, const std::string& head = kHead) {
  return ParseModelConfig(head + pipeline, "p", "models/p/config.yaml");
}

std::string ErrorOf(const std::string& pipeline, const std::string& head = kHead) {
  absl::StatusOr<ModelConfig> config = Parse(pipeline, head);
  EXPECT_FALSE(config.ok()) << pipeline;
  return config.ok() ? "" : std::string(config.status().message());
}

constexpr char kGood[] = R"(pipeline:
  steps:
    - {name: top, op: top_k, inputs: {x: probs}, outputs: {labels: top}, params: {k: 5}}
    - {name: pre, op: image_to_tensor, inputs: {bytes: image}, outputs: {tensor: pixels}}
    - {name: net, model: resnet18, version: 2, inputs: {image: pixels}, outputs: {logits: probs}}
  answer: {labels: top}
)";

TEST(PipelineSpecParserTest, ParsesStepsInAnyOrderAndOrdersThemByData) {
  absl::StatusOr<ModelConfig> config = Parse(kGood);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_NE(config->pipeline, nullptr);
  EXPECT_TRUE(config->capabilities.pipeline);
  EXPECT_FALSE(config->dynamic_batching.enabled);  // the pipeline never merges requests
  EXPECT_EQ(config->inputs[0].content, TensorContent::kImage);
  const PipelineSpec& spec = *config->pipeline;
  ASSERT_EQ(spec.steps.size(), 3u);
  EXPECT_EQ(spec.steps[2].model, "resnet18");
  EXPECT_EQ(spec.steps[2].version, 2);
  EXPECT_THAT(spec.steps[0].params_yaml, HasSubstr("k: 5"));
  EXPECT_EQ(spec.topological_order, (std::vector<size_t>{1, 2, 0}));
  EXPECT_EQ(spec.answer.at("labels"), "top");
}

TEST(PipelineSpecParserTest, EachErrorNamesItsField) {
  EXPECT_THAT(ErrorOf("pipeline:\n  steps: []\n"),
              HasSubstr("models/p/config.yaml: pipeline.steps: must be a non-empty list"));
  EXPECT_THAT(ErrorOf("pipeline:\n  stepz: []\n"), HasSubstr("pipeline.stepz: unknown field"));
  EXPECT_THAT(ErrorOf(R"(pipeline:
  steps: [{name: a, op: softmax, model: m, inputs: {x: image}, outputs: {y: top}}]
)"),
              HasSubstr("pipeline.steps[0]: needs exactly one of op"));
  EXPECT_THAT(ErrorOf(R"(pipeline:
  steps: [{name: a, op: softmax, inputs: {x: image}, outputs: {y: top}, colour: red}]
)"),
              HasSubstr("pipeline.steps[0].colour: unknown field"));
  EXPECT_THAT(ErrorOf(R"(pipeline:
  steps:
    - {name: a, op: softmax, inputs: {x: image}, outputs: {y: mid}}
    - {name: a, op: softmax, inputs: {x: mid}, outputs: {y: top}}
)"),
              HasSubstr("pipeline.steps[1].name: 'a' names two steps"));
  EXPECT_THAT(ErrorOf(R"(pipeline:
  steps:
    - {name: a, op: softmax, inputs: {x: image}, outputs: {y: top}}
    - {name: b, op: softmax, inputs: {x: image}, outputs: {y: top}}
)"),
              HasSubstr("pipeline.steps[1].outputs.y: 'top' is already"));
  EXPECT_THAT(ErrorOf(R"(pipeline:
  steps: [{name: a, op: softmax, inputs: {x: logitz}, outputs: {y: top}}]
)"),
              HasSubstr("pipeline.steps[0].inputs.x: 'logitz' is not a pipeline input or a "
                        "step's output (known: image, top)"));
  EXPECT_THAT(ErrorOf(R"(pipeline:
  steps: [{name: a, op: softmax, inputs: {x: image}, outputs: {y: other}}]
)"),
              HasSubstr("outputs[0].name: 'top' is not produced by any step"));
  EXPECT_THAT(ErrorOf(R"(pipeline:
  steps: [{name: a, op: softmax, inputs: {x: image}, outputs: {y: top}}]
  answer: {labels: nope}
)"),
              HasSubstr("pipeline.answer.labels: 'nope' is not one of the pipeline's outputs"));
  EXPECT_THAT(ErrorOf(R"(pipeline:
  steps: [{name: a, model: m, inputs: {x: image}, outputs: {y: top}, params: {k: 1}}]
)"),
              HasSubstr("pipeline.steps[0].params: is for op steps only"));
}

TEST(PipelineSpecParserTest, RefusesPipelineKeysOnOtherBackendsAndEngineKeysOnPipelines) {
  EXPECT_THAT(ErrorOf("pipeline: {steps: []}\n", "backend: torch\n"),
              HasSubstr("pipeline: is for backend: pipeline only"));
  EXPECT_THAT(ErrorOf(std::string(kGood) + "dynamic_batching: {}\n"),
              HasSubstr("dynamic_batching: is not for pipelines"));
  EXPECT_THAT(ErrorOf(std::string(kGood) + "precision: fp16\n"),
              HasSubstr("precision: is not for pipelines"));
  EXPECT_THAT(ErrorOf("", kHead), HasSubstr("pipeline: is required for backend: pipeline"));
  EXPECT_THAT(ErrorOf(kGood, R"(backend: pipeline
inputs: [{name: image, datatype: FP32, dims: [3], content: image}]
outputs: [{name: top, datatype: BYTES, dims: [5]}]
)"),
              HasSubstr("inputs[0].content: is for BYTES tensors only"));
}

TEST(PipelineSpecParserTest, ReportsACycleAsAPath) {
  const std::string message = ErrorOf(R"(pipeline:
  steps:
    - {name: a, op: softmax, inputs: {x: b_out}, outputs: {y: a_out}}
    - {name: b, op: softmax, inputs: {x: a_out}, outputs: {y: b_out}}
    - {name: c, op: softmax, inputs: {x: image}, outputs: {y: top}}
)");
  EXPECT_THAT(message, HasSubstr("pipeline.steps: cycle "));
  // Either rotation of the loop, with the read that closes it named.
  EXPECT_THAT(message,
              ::testing::AnyOf(HasSubstr("cycle a -> b -> a (steps[0].inputs.x reads b's output "
                                         "'b_out')"),
                               HasSubstr("cycle b -> a -> b (steps[1].inputs.x reads a's output "
                                         "'a_out')")));
}

}  // namespace
}  // namespace inferd

#include "backends/pipeline/pipeline_compiler.h"

#include <fstream>
#include <map>
#include <string>

#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/post/register_post_ops.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

class FakeConfigs : public ConfigLookup {
 public:
  absl::StatusOr<std::shared_ptr<const ModelConfig>> ConfigOf(
      std::string_view name) const override {
    auto it = configs.find(std::string(name));
    if (it == configs.end()) return absl::NotFoundError("no such model");
    return it->second;
  }
  void Add(const std::string& yaml, const std::string& name) {
    configs[name] = std::make_shared<const ModelConfig>(
        ParseModelConfig(yaml, name, name + "/config.yaml").value());
  }
  std::map<std::string, std::shared_ptr<const ModelConfig>> configs;
};

// Stands for a decoder: heavy, BYTES in, FP32 [4] out.
class HeavyOp : public PipelineOp {
 public:
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  const std::vector<TensorSpec>& outputs() const override { return outputs_; }
  bool heavy() const override { return true; }
  absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor>) const override {
    return absl::UnimplementedError("not run here");
  }

 private:
  std::vector<TensorSpec> inputs_{{"bytes", DataType::kBytes, {}}};
  std::vector<TensorSpec> outputs_{{"tensor", DataType::kFp32, {4}}};
};

class PipelineCompilerTest : public ::testing::Test {
 protected:
  PipelineCompilerTest() {
    RegisterPostOps(ops_);
    ops_.Register("decode",
                  [](const OpLoadRequest&) -> absl::StatusOr<std::unique_ptr<PipelineOp>> {
                    return std::make_unique<HeavyOp>();
                  });
    models_.Add(R"(backend: torch
max_batch_size: 8
inputs: [{name: pixels, datatype: FP32, dims: [4]}]
outputs: [{name: probs, datatype: FP32, dims: [10]}]
)",
                "net");
    models_.Add("backend: llama\n", "chat");
  }

  absl::Status Compile(const std::string& yaml) {
    absl::StatusOr<ModelConfig> config = ParseModelConfig(yaml, "p", "p/config.yaml");
    if (!config.ok()) return config.status();
    return CompilePipeline(*config, ops_, models_, dir_.path(), "p/config.yaml").status();
  }

  OpRegistry ops_;
  FakeConfigs models_;
  testing::TempDir dir_{"pipeline_compiler"};
};

constexpr char kHead[] = R"(backend: pipeline
max_batch_size: 8
inputs: [{name: image, datatype: BYTES, dims: []}]
outputs: [{name: top, datatype: BYTES, dims: [3]}]
)";

TEST_F(PipelineCompilerTest, CompilesDecodeModelSoftmaxTopK) {
  const absl::Status status = Compile(std::string(kHead) + R"(pipeline:
  steps:
    - {name: pre, op: decode, inputs: {bytes: image}, outputs: {tensor: pixels}}
    - {name: run, model: net, inputs: {pixels: pixels}, outputs: {probs: logits}}
    - {name: sm, op: softmax, inputs: {x: logits}, outputs: {y: probs}}
    - {name: top, op: top_k, inputs: {x: probs}, outputs: {labels: top}, params: {k: 3}}
)");
  EXPECT_TRUE(status.ok()) << status;
}

TEST_F(PipelineCompilerTest, LabelsCountIsCheckedThroughAShapePreservingOp) {
  std::ofstream(dir_.path() / "labels.txt") << "a\nb\nc\nd\n";
  const absl::Status status = Compile(std::string(kHead) + R"(pipeline:
  steps:
    - {name: pre, op: decode, inputs: {bytes: image}, outputs: {tensor: pixels}}
    - {name: run, model: net, inputs: {pixels: pixels}, outputs: {probs: logits}}
    - {name: sm, op: softmax, inputs: {x: logits}, outputs: {y: probs}}
    - {name: top, op: top_k, inputs: {x: probs}, outputs: {labels: top},
       params: {k: 3, labels: labels.txt}}
)");
  EXPECT_THAT(status.message(), HasSubstr("p/config.yaml: pipeline.steps[3].inputs.x: op 'top_k' "
                                          "takes FP32 [4]; steps[2] ('sm') gives FP32 [10]"));
}

TEST_F(PipelineCompilerTest, HeavyOpsMayReadOnlyPipelineInputs) {
  const absl::Status status = Compile(R"(backend: pipeline
max_batch_size: 8
inputs: [{name: image, datatype: BYTES, dims: []}]
outputs: [{name: out, datatype: FP32, dims: [4]}]
pipeline:
  steps:
    - {name: pre, op: decode, inputs: {bytes: image}, outputs: {tensor: t}}
    - {name: again, op: decode, inputs: {bytes: t}, outputs: {tensor: out}}
)");
  EXPECT_THAT(status.message(), HasSubstr("pipeline.steps[1].inputs.bytes:"));
}

TEST_F(PipelineCompilerTest, ModelStepErrorsNameTheField) {
  const std::string steps_head =
      std::string(kHead) +
      "pipeline:\n  steps:\n"
      "    - {name: pre, op: decode, inputs: {bytes: image}, outputs: {tensor: pixels}}\n";
  const std::string tail =
      "    - {name: top, op: top_k, inputs: {x: logits}, outputs: {labels: top}, params: {k: 3}}\n";
  EXPECT_THAT(Compile(steps_head +
                      "    - {name: run, model: chat, inputs: {pixels: pixels}, outputs: {probs: "
                      "logits}}\n" +
                      tail)
                  .message(),
              HasSubstr("pipeline.steps[1].model: model 'chat' generates text"));
  EXPECT_THAT(Compile(steps_head +
                      "    - {name: run, model: net, inputs: {pixelz: pixels}, outputs: {probs: "
                      "logits}}\n" +
                      tail)
                  .message(),
              HasSubstr("pipeline.steps[1].inputs: misses 'pixels' (model 'net' takes pixels)"));
  EXPECT_THAT(Compile(steps_head +
                      "    - {name: run, model: net, inputs: {pixels: pixels}, outputs: {prob: "
                      "logits}}\n" +
                      tail)
                  .message(),
              HasSubstr("pipeline.steps[1].outputs.prob: is not an output of model 'net'"));
  // Listed after the step that reads it: fine.
  const absl::Status reordered =
      Compile(steps_head + tail +
              "    - {name: run, model: net, inputs: {pixels: pixels}, outputs: {probs: "
              "logits}}\n");
  EXPECT_TRUE(reordered.ok()) << reordered;
}

TEST_F(PipelineCompilerTest, OpPortErrorsNameTheField) {
  EXPECT_THAT(Compile(std::string(kHead) + R"(pipeline:
  steps:
    - {name: pre, op: decode, inputs: {bytes: image}, outputs: {tensor: t}}
    - {name: top, op: top_k, inputs: {y: t}, outputs: {labels: top}, params: {k: 3}}
)")
                  .message(),
              HasSubstr("pipeline.steps[1].inputs: misses port 'x'"));
  EXPECT_THAT(Compile(std::string(kHead) + R"(pipeline:
  steps:
    - {name: pre, op: decode, inputs: {bytes: image}, outputs: {tensor: t}}
    - {name: top, op: top_k, inputs: {x: t}, outputs: {names: top}, params: {k: 3}}
)")
                  .message(),
              HasSubstr("pipeline.steps[1].outputs.names: is not an output port of op 'top_k' "
                        "(indices, scores, labels)"));
}

}  // namespace
}  // namespace inferd

// The seed's first request to a text pipeline is {"input": "some text"} on /predict: a BYTES
// input declared with `dims: []` and max_batch_size > 0. /predict decodes the string as a
// scalar (shape []), which matches dims [] and so is one instance ([1] after the batch dim is
// added); the validator must accept that [1] BYTES tensor for the pipeline's [-1] signature.
#include <simdjson.h>

#include "core/config/model_config.h"
#include "core/model/request_validator.h"
#include "core/types/bytes_tensor.h"
#include "frontends/http/codecs/json_tensor_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

constexpr char kTextPipeline[] = R"(backend: pipeline
max_batch_size: 8
inputs: [{name: text, datatype: BYTES, dims: [], content: text}]
outputs: [{name: text_out, datatype: FP32, dims: [-1]}]
pipeline:
  steps: [{name: s, op: softmax, inputs: {x: text}, outputs: {y: text_out}}]
)";

TEST(PipelineTextInputTest, AStringForADimslessBytesInputIsOneValidInstance) {
  absl::StatusOr<ModelConfig> config = ParseModelConfig(kTextPipeline, "p", "p/config.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->FullShape(config->inputs[0]), (Shape{-1}));
  EXPECT_EQ(config->inputs[0].content, TensorContent::kText);

  simdjson::dom::parser parser;
  const simdjson::padded_string body(std::string_view(R"("some text")"));
  simdjson::dom::element json = parser.parse(body).value();
  absl::StatusOr<Tensor> decoded = DecodeNestedTensor(json, DataType::kBytes, "'input'", 64);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  // plain_predict_handler's single-instance rule: rank == dims.size().
  EXPECT_EQ(decoded->shape().size(), config->inputs[0].dims.size());

  InferRequest request;
  request.inputs.push_back(
      {"text", MakeBytesTensor(Shape{1}, std::vector<std::string_view>{"some text"}).value()});
  EXPECT_TRUE(ValidateAndOrderInputs(*config, request).ok());
}

}  // namespace
}  // namespace inferd

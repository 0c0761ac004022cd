#include "frontends/http/codecs/kserve_codec.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/types/bytes_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shm/testing/shm_object.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The message of decoding `body`, which must fail with InvalidArgument.
std::string ErrorOf(std::string body) {
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeInferRequest(body);
  EXPECT_FALSE(request.ok()) << "decoded unexpectedly: " << body;
  if (request.ok()) return "";
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(request.status().message());
}

template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  std::vector<T> values(static_cast<size_t>(tensor.element_count()));
  std::memcpy(values.data(), tensor.data(), values.size() * sizeof(T));
  return values;
}

TEST(KserveCodecTest, DecodesFullRequest) {
  std::string body = R"({
    "id": "req-7",
    "inputs": [
      {"name": "features", "datatype": "FP32", "shape": [2, 2], "data": [[1, 2], [3, 4.5]]},
      {"name": "ids", "datatype": "INT64", "shape": [2], "data": [-1, 9]}
    ],
    "outputs": [{"name": "score"}, {"name": "label"}]
  })";
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeInferRequest(body);
  ASSERT_TRUE(request.ok()) << request.status();
  const InferRequest& r = **request;
  EXPECT_EQ(r.id, "req-7");
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].name, "features");
  EXPECT_EQ(r.inputs[0].tensor.type(), DataType::kFp32);
  EXPECT_THAT(r.inputs[0].tensor.shape(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>(r.inputs[0].tensor), ElementsAre(1.0f, 2.0f, 3.0f, 4.5f));
  EXPECT_EQ(r.inputs[1].name, "ids");
  EXPECT_EQ(r.inputs[1].tensor.type(), DataType::kInt64);
  EXPECT_THAT(r.inputs[1].tensor.shape(), ElementsAre(2));
  EXPECT_THAT(Values<int64_t>(r.inputs[1].tensor), ElementsAre(-1, 9));
  EXPECT_THAT(r.requested_outputs, ElementsAre("score", "label"));
  EXPECT_FALSE(r.on_complete);
}

TEST(KserveCodecTest, IdAndOutputsAreOptional) {
  std::string body =
      R"({"inputs": [{"name": "x", "datatype": "BOOL", "shape": [1], "data": [true]}]})";
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeInferRequest(body);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ((*request)->id, "");
  EXPECT_THAT((*request)->requested_outputs, IsEmpty());
}

TEST(KserveCodecTest, RejectsInvalidJson) {
  EXPECT_THAT(ErrorOf("{\"inputs\": ["), HasSubstr("not valid JSON"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("empty"));
}

TEST(KserveCodecTest, RejectsBodyThatIsNotAnObject) {
  EXPECT_THAT(ErrorOf("[1, 2]"), HasSubstr("must be a JSON object"));
}

TEST(KserveCodecTest, RejectsMissingInputs) {
  EXPECT_THAT(ErrorOf(R"({"id": "a"})"), HasSubstr("'inputs' is required"));
}

TEST(KserveCodecTest, RejectsInputsThatAreNotAnArray) {
  EXPECT_THAT(ErrorOf(R"({"inputs": {"name": "x"}})"), HasSubstr("'inputs' must be an array"));
}

TEST(KserveCodecTest, RejectsEmptyInputs) {
  EXPECT_THAT(ErrorOf(R"({"inputs": []})"), HasSubstr("'inputs' is empty"));
}

TEST(KserveCodecTest, RejectsInputThatIsNotAnObject) {
  EXPECT_THAT(ErrorOf(R"({"inputs": [5]})"), HasSubstr("inputs[0]: must be an object"));
}

TEST(KserveCodecTest, RejectsMissingName) {
  EXPECT_THAT(ErrorOf(R"({"inputs": [{"datatype": "FP32", "shape": [1], "data": [1]}]})"),
              HasSubstr("inputs[0]: 'name' is required"));
}

TEST(KserveCodecTest, RejectsMissingDatatype) {
  EXPECT_THAT(ErrorOf(R"({"inputs": [{"name": "x", "shape": [1], "data": [1]}]})"),
              HasSubstr("input 'x': 'datatype' is required"));
}

TEST(KserveCodecTest, RejectsUnknownDatatype) {
  EXPECT_THAT(
      ErrorOf(R"({"inputs": [{"name": "x", "datatype": "FP33", "shape": [1], "data": [1]}]})"),
      AllOf(HasSubstr("input 'x': datatype 'FP33' is not one of"), HasSubstr("FP32")));
}

TEST(KserveCodecTest, DecodesBytesFromJsonStrings) {
  std::string body =
      R"({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [2, 1],
                      "data": [["hello"], [""]]}]})";
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeInferRequest(body);
  ASSERT_TRUE(request.ok()) << request.status();
  const Tensor& text = (*request)->inputs[0].tensor;
  EXPECT_EQ(text.type(), DataType::kBytes);
  EXPECT_THAT(text.shape(), ElementsAre(2, 1));
  EXPECT_THAT(BytesElements(text), ElementsAre("hello", ""));
}

TEST(KserveCodecTest, RejectsBytesDataThatIsNotStrings) {
  EXPECT_THAT(
      ErrorOf(
          R"({"inputs": [{"name": "x", "datatype": "BYTES", "shape": [2], "data": ["a", 1]}]})"),
      HasSubstr("input 'x': element 1 is 1, but BYTES data must be strings"));
  EXPECT_THAT(
      ErrorOf(R"({"inputs": [{"name": "x", "datatype": "BYTES", "shape": [2], "data": ["a"]}]})"),
      HasSubstr("shape [2] needs 2 elements, but data has 1"));
}

TEST(KserveCodecTest, RejectsMissingShape) {
  EXPECT_THAT(ErrorOf(R"({"inputs": [{"name": "x", "datatype": "FP32", "data": [1]}]})"),
              HasSubstr("input 'x': 'shape' is required"));
}

TEST(KserveCodecTest, RejectsNegativeOrNonIntegerShape) {
  EXPECT_THAT(
      ErrorOf(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [-1], "data": [1]}]})"),
      AllOf(HasSubstr("input 'x'"), HasSubstr("non-negative integers"), HasSubstr("[-1]")));
  EXPECT_THAT(
      ErrorOf(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1.5], "data": [1]}]})"),
      HasSubstr("non-negative integers"));
}

TEST(KserveCodecTest, RejectsMissingData) {
  EXPECT_THAT(ErrorOf(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1]}]})"),
              HasSubstr("input 'x': 'data' is required"));
}

TEST(KserveCodecTest, RejectsDataThatDoesNotMatchTheShape) {
  EXPECT_THAT(
      ErrorOf(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [3], "data": [1, 2]}]})"),
      HasSubstr("input 'x': shape [3] needs 3 elements, but data has 2"));
}

TEST(KserveCodecTest, RejectsShapeLargerThanTheBodyCouldHold) {
  EXPECT_THAT(ErrorOf(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [100000000],)"
                      R"( "data": [1]}]})"),
              HasSubstr("needs 100000000 elements, but data has 1"));
}

TEST(KserveCodecTest, RejectsNonStringId) {
  EXPECT_THAT(
      ErrorOf(
          R"({"id": 5, "inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1]}]})"),
      HasSubstr("'id' must be a string"));
}

TEST(KserveCodecTest, RejectsMalformedOutputs) {
  const std::string input =
      R"("inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1]}])";
  EXPECT_THAT(ErrorOf("{" + input + R"(, "outputs": {"name": "y"}})"),
              HasSubstr("'outputs' must be an array"));
  EXPECT_THAT(ErrorOf("{" + input + R"(, "outputs": ["y"]})"),
              HasSubstr("outputs[0]: must be an object"));
  EXPECT_THAT(ErrorOf("{" + input + R"(, "outputs": [{"nom": "y"}]})"),
              HasSubstr("outputs[0]: 'name' is required"));
}

Tensor Fp32(Shape shape, const std::vector<float>& values) {
  Tensor tensor = Tensor::Allocate(DataType::kFp32, std::move(shape)).value();
  std::memcpy(tensor.mutable_data(), values.data(), tensor.byte_size());
  return tensor;
}

TEST(KserveCodecTest, EncodesResponseExactly) {
  InferResponse response;
  response.outputs.push_back({"score", Fp32({2, 1}, {0.1f, -2.0f})});
  Tensor labels = Tensor::Allocate(DataType::kInt64, {2}).value();
  labels.mutable_data_as<int64_t>()[0] = 3;
  labels.mutable_data_as<int64_t>()[1] = -1;
  response.outputs.push_back({"label", labels});

  EXPECT_EQ(EncodeInferResponse("mlp", 2, "req-7", response),
            R"({"model_name":"mlp","model_version":"2","id":"req-7","outputs":[)"
            R"({"name":"score","datatype":"FP32","shape":[2,1],"data":[0.1,-2]},)"
            R"({"name":"label","datatype":"INT64","shape":[2],"data":[3,-1]}]})");
}

TEST(KserveCodecTest, EncodesResponseWithoutIdWhenEmpty) {
  InferResponse response;
  response.outputs.push_back({"y", Fp32({}, {1.5f})});
  EXPECT_EQ(EncodeInferResponse("m", 1, "", response),
            R"({"model_name":"m","model_version":"1","outputs":[)"
            R"({"name":"y","datatype":"FP32","shape":[],"data":[1.5]}]})");
}

TEST(KserveCodecTest, EncodesResponseEscapingStrings) {
  InferResponse response;
  EXPECT_EQ(EncodeInferResponse("m", 1, "a\"b", response),
            R"({"model_name":"m","model_version":"1","id":"a\"b","outputs":[]})");
}

TEST(KserveCodecTest, DecodesSchedulingParameters) {
  std::string body = R"({
    "parameters": {"priority": 2, "timeout": 5000, "unrelated": "ignored"},
    "inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1]}]
  })";
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeInferRequest(body);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ((*request)->priority, 2);
  EXPECT_EQ((*request)->timeout_us, 5000);
}

TEST(KserveCodecTest, WithoutParametersPriorityAndTimeoutAreTheModelDefaults) {
  std::string body =
      R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1]}]})";
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeInferRequest(body);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ((*request)->priority, 0);
  EXPECT_EQ((*request)->timeout_us, 0);
}

TEST(KserveCodecTest, RejectsMalformedSchedulingParameters) {
  const std::string inputs =
      R"("inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1]}])";
  EXPECT_THAT(ErrorOf(R"({"parameters": {"priority": -1}, )" + inputs + "}"),
              HasSubstr("parameter 'priority' must be a non-negative integer"));
  EXPECT_THAT(ErrorOf(R"({"parameters": {"priority": "high"}, )" + inputs + "}"),
              HasSubstr("parameter 'priority' must be a non-negative integer"));
  EXPECT_THAT(ErrorOf(R"({"parameters": {"timeout": 1.5}, )" + inputs + "}"),
              HasSubstr("parameter 'timeout' must be a non-negative integer (microseconds)"));
  EXPECT_THAT(ErrorOf(R"({"parameters": [1], )" + inputs + "}"),
              HasSubstr("'parameters' must be an object"));
}

TEST(KserveCodecTest, ReadsInputsFromAndSendsOutputsToSharedMemory) {
  testing::ShmObject object(64);
  object.WriteValues<float>(8, {2.0f, 4.0f});
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("alice", "io", object.key(), 0, 64).ok());
  const SharedMemoryScope alice(registry, "alice");
  std::string body = R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2],
      "parameters": {"shared_memory_region": "io", "shared_memory_byte_size": 8,
                     "shared_memory_offset": 8}}],
    "outputs": [{"name": "y", "parameters": {"shared_memory_region": "io",
                                             "shared_memory_byte_size": 16,
                                             "shared_memory_offset": 32}},
                {"name": "z"}]})";
  const std::string again = body;  // the decoder pads and parses in place
  OutputDestinations destinations;
  absl::StatusOr<std::unique_ptr<InferRequest>> request =
      DecodeInferRequest(body, {.shared_memory = &alice, .outputs = &destinations});
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_EQ((*request)->inputs.size(), 1u);
  const float* x = (*request)->inputs[0].tensor.data_as<float>();
  EXPECT_EQ(x[0], 2.0f);
  EXPECT_EQ(x[1], 4.0f);
  EXPECT_THAT((*request)->requested_outputs, ElementsAre("y", "z"));
  const SharedMemorySlice* y = destinations.shared_memory.Find("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->offset, 32u);
  EXPECT_EQ(y->byte_size, 16u);
  EXPECT_EQ(destinations.shared_memory.Find("z"), nullptr);

  InferResponse response;
  response.outputs.push_back({"y", Fp32({2}, {1.0f, 2.0f})});
  response.outputs.push_back({"z", Fp32({1}, {3.0f})});
  EXPECT_EQ(EncodeInferResponse("m", 1, "", response, &destinations),
            R"({"model_name":"m","model_version":"1","outputs":[)"
            R"({"name":"y","datatype":"FP32","shape":[2]},)"
            R"({"name":"z","datatype":"FP32","shape":[1],"data":[3]}]})");

  // Issue 30: another tenant's request naming alice's region finds nothing.
  const SharedMemoryScope bob(registry, "bob");
  std::string bobs = again;
  OutputDestinations bob_destinations;
  absl::StatusOr<std::unique_ptr<InferRequest>> refused =
      DecodeInferRequest(bobs, {.shared_memory = &bob, .outputs = &bob_destinations});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(refused.status().message(), HasSubstr("'io' is not registered"));
}

TEST(KserveCodecTest, RefusesSharedMemoryParametersThatDoNotAddUp) {
  testing::ShmObject object(16);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("", "io", object.key(), 0, 16).ok());
  const SharedMemoryScope scope(registry, "");
  OutputDestinations destinations;
  auto error_of = [&](std::string body, const SharedMemoryScope* shared_memory) {
    absl::StatusOr<std::unique_ptr<InferRequest>> request =
        DecodeInferRequest(body, {.shared_memory = shared_memory, .outputs = &destinations});
    EXPECT_FALSE(request.ok()) << body;
    return request.ok() ? absl::OkStatus() : request.status();
  };
  const std::string region = R"("parameters": {"shared_memory_region": "io",
                                                "shared_memory_byte_size": 8})";
  EXPECT_THAT(error_of(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2],
                                       "data": [1, 2], )" +
                           region + "}]}",
                       &scope)
                  .message(),
              HasSubstr("also 'data'"));
  EXPECT_THAT(error_of(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2],
                                       "parameters": {"shared_memory_region": "io"}}]})",
                       &scope)
                  .message(),
              HasSubstr("needs both"));
  EXPECT_THAT(
      error_of(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2], )" + region + "}]}",
               nullptr)
          .message(),
      HasSubstr("not available"));
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2],
                                     "parameters": {"shared_memory_region": "gone",
                                                    "shared_memory_byte_size": 8}}]})",
                     &scope)
                .code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(
      error_of(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [3], )" + region + "}]}",
               &scope)
          .message(),
      HasSubstr("needs 3 x 4 bytes"));
}

}  // namespace
}  // namespace inferd

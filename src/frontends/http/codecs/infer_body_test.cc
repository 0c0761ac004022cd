#include "frontends/http/codecs/infer_body.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/types/bytes_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A request view over `body` with the binary extension's header when `json_length` >= 0.
struct BinaryRequest {
  std::string body;
  std::string length;
  HttpRequestView view;

  BinaryRequest(std::string json, const std::string& binary, long json_length = -2) {
    body = json + binary;
    length = std::to_string(json_length == -2 ? static_cast<long>(json.size()) : json_length);
    view.method = HttpMethod::kPost;
    view.body = &body;
    view.headers.emplace_back("inference-header-content-length", length);
  }
};

std::string FloatBytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

std::string ErrorOf(BinaryRequest& request) {
  absl::StatusOr<DecodedInferBody> decoded = DecodeInferBody(request.view, nullptr);
  EXPECT_FALSE(decoded.ok());
  if (decoded.ok()) return "";
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(decoded.status().message());
}

constexpr char kTwoFloats[] =
    R"({"inputs":[{"name":"x","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}]})";

TEST(InferBodyTest, DecodesBinaryInputs) {
  BinaryRequest request(kTwoFloats, FloatBytes({1.5f, -2.0f}));
  absl::StatusOr<DecodedInferBody> decoded = DecodeInferBody(request.view, nullptr);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Tensor& x = decoded->request->inputs[0].tensor;
  ASSERT_EQ(x.element_count(), 2);
  EXPECT_EQ(x.data_as<float>()[0], 1.5f);
  EXPECT_EQ(x.data_as<float>()[1], -2.0f);
}

TEST(InferBodyTest, AlignedBinaryInputIsAViewIntoTheBody) {
  // Pad the JSON so the tensor starts at a multiple of 4 from the (aligned) buffer start.
  std::string json = kTwoFloats;
  while (json.size() % 8 != 0) json += ' ';
  BinaryRequest request(json, FloatBytes({1.0f, 2.0f}));
  absl::StatusOr<DecodedInferBody> decoded = DecodeInferBody(request.view, nullptr);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Tensor& x = decoded->request->inputs[0].tensor;
  ASSERT_NE(x.owner(), nullptr);
  const auto* body = static_cast<const std::string*>(x.owner().get());
  EXPECT_EQ(reinterpret_cast<const char*>(x.data()), body->data() + json.size());
}

TEST(InferBodyTest, DecodesBinaryBytesInput) {
  std::string binary;
  AppendBytesElement("hello", binary);
  AppendBytesElement("", binary);
  BinaryRequest request(
      R"({"inputs":[{"name":"t","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":)" +
          std::to_string(binary.size()) + "}}]}",
      binary);
  absl::StatusOr<DecodedInferBody> decoded = DecodeInferBody(request.view, nullptr);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(BytesElements(decoded->request->inputs[0].tensor), ElementsAre("hello", ""));
}

TEST(InferBodyTest, RejectsHeaderLengthBeyondTheBody) {
  BinaryRequest request(kTwoFloats, FloatBytes({1, 2}), 100000);
  EXPECT_THAT(ErrorOf(request),
              HasSubstr("Inference-Header-Content-Length is 100000 but the body"));
}

TEST(InferBodyTest, RejectsHeaderThatIsNotANumber) {
  BinaryRequest request(kTwoFloats, FloatBytes({1, 2}));
  request.length = "12x";
  request.view.headers[0].second = request.length;
  EXPECT_THAT(ErrorOf(request), HasSubstr("'12x' is not a non-negative integer"));
}

TEST(InferBodyTest, RejectsBinarySizeNotMatchingShape) {
  BinaryRequest request(
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[3],"parameters":{"binary_data_size":8}}]})",
      FloatBytes({1, 2}));
  EXPECT_THAT(ErrorOf(request), HasSubstr("binary_data_size is 8 bytes, but shape [3] of FP32"));
}

TEST(InferBodyTest, RejectsBinarySizeBeyondTheBody) {
  BinaryRequest request(kTwoFloats, FloatBytes({1}));
  EXPECT_THAT(ErrorOf(request), HasSubstr("binary_data_size is 8 but only 4 bytes"));
}

TEST(InferBodyTest, RejectsLeftOverBytes) {
  BinaryRequest request(kTwoFloats, FloatBytes({1, 2, 3}));
  EXPECT_THAT(ErrorOf(request), HasSubstr("4 bytes of binary data are left over"));
}

TEST(InferBodyTest, RejectsTruncatedBytesElement) {
  std::string binary(
      "\x09\x00\x00\x00"
      "abc",
      7);
  BinaryRequest request(
      R"({"inputs":[{"name":"t","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":7}}]})",
      binary);
  EXPECT_THAT(ErrorOf(request), HasSubstr("claims 9 bytes but only 3 remain"));
}

TEST(InferBodyTest, RejectsBinarySizeWithoutTheHeader) {
  std::string body = kTwoFloats;
  HttpRequestView view;
  view.body = &body;
  absl::StatusOr<DecodedInferBody> decoded = DecodeInferBody(view, nullptr);
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(decoded.status().message(), HasSubstr("needs the binary tensor extension"));
}

TEST(InferBodyTest, ReadsBinaryOutputChoices) {
  std::string body =
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],
          "parameters":{"binary_data_output":true},
          "outputs":[{"name":"a","parameters":{"binary_data":false}},{"name":"b"}]})";
  HttpRequestView view;
  view.body = &body;
  absl::StatusOr<DecodedInferBody> decoded = DecodeInferBody(view, nullptr);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_FALSE(decoded->outputs.binary.IsBinary("a"));
  EXPECT_TRUE(decoded->outputs.binary.IsBinary("b"));
}

TEST(InferBodyTest, EncodesBinaryOutputsAfterTheJson) {
  absl::StatusOr<Tensor> out = Tensor::Allocate(DataType::kFp32, {2});
  ASSERT_TRUE(out.ok());
  out->mutable_data_as<float>()[0] = 3.0f;
  out->mutable_data_as<float>()[1] = 4.0f;
  InferResponse response;
  response.outputs.push_back({"y", *out});
  OutputDestinations destinations;
  destinations.binary.all = true;
  HttpReply reply = EncodeInferReply("m", 1, "", response, destinations);
  ASSERT_EQ(reply.headers.size(), 1u);
  EXPECT_EQ(reply.headers[0].first, "Inference-Header-Content-Length");
  const size_t json_length = std::stoul(reply.headers[0].second);
  ASSERT_EQ(reply.body.size(), json_length + 8);
  EXPECT_THAT(reply.body.substr(0, json_length), HasSubstr(R"("binary_data_size":8)"));
  float values[2];
  std::memcpy(values, reply.body.data() + json_length, 8);
  EXPECT_EQ(values[0], 3.0f);
  EXPECT_EQ(values[1], 4.0f);
}

}  // namespace
}  // namespace inferd

#include "frontends/grpc/grpc_infer_codec.h"

#include <string>

#include "core/types/bytes_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shm/testing/shm_object.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

inference::ModelInferRequest OneInput(const std::string& datatype, std::vector<int64_t> shape) {
  inference::ModelInferRequest request;
  request.set_model_name("m");
  auto* input = request.add_inputs();
  input->set_name("x");
  input->set_datatype(datatype);
  for (int64_t dim : shape) input->add_shape(dim);
  return request;
}

std::string ErrorOf(const inference::ModelInferRequest& request) {
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeGrpcInferRequest(request);
  EXPECT_FALSE(decoded.ok());
  if (decoded.ok()) return "";
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(decoded.status().message());
}

TEST(GrpcInferCodecTest, DecodesRawFp32AndParameters) {
  inference::ModelInferRequest request = OneInput("FP32", {2});
  const float values[2] = {1.5f, -3.0f};
  request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(values), 8);
  request.set_id("r1");
  (*request.mutable_parameters())["priority"].set_uint64_param(2);
  (*request.mutable_parameters())["timeout"].set_int64_param(500);
  request.add_outputs()->set_name("y");
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeGrpcInferRequest(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const InferRequest& r = **decoded;
  EXPECT_EQ(r.id, "r1");
  EXPECT_EQ(r.priority, 2);
  EXPECT_EQ(r.timeout_us, 500);
  EXPECT_THAT(r.requested_outputs, ElementsAre("y"));
  EXPECT_EQ(r.inputs[0].tensor.data_as<float>()[1], -3.0f);
}

TEST(GrpcInferCodecTest, DecodesRawAndTypedBytes) {
  std::string raw;
  AppendBytesElement("hello", raw);
  AppendBytesElement("", raw);
  inference::ModelInferRequest request = OneInput("BYTES", {2, 1});
  request.add_raw_input_contents()->assign(raw);
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeGrpcInferRequest(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(BytesElements((*decoded)->inputs[0].tensor), ElementsAre("hello", ""));

  inference::ModelInferRequest typed = OneInput("BYTES", {2});
  typed.mutable_inputs(0)->mutable_contents()->add_bytes_contents("a");
  typed.mutable_inputs(0)->mutable_contents()->add_bytes_contents("bc");
  decoded = DecodeGrpcInferRequest(typed);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_THAT(BytesElements((*decoded)->inputs[0].tensor), ElementsAre("a", "bc"));
}

TEST(GrpcInferCodecTest, RejectsTruncatedRawBytes) {
  inference::ModelInferRequest request = OneInput("BYTES", {1});
  request.add_raw_input_contents()->assign(
      std::string("\x08\x00\x00\x00"
                  "ab",
                  6));
  EXPECT_THAT(ErrorOf(request), HasSubstr("claims 8 bytes but only 2 remain"));
}

TEST(GrpcInferCodecTest, RejectsRawSizeNotMatchingShape) {
  inference::ModelInferRequest request = OneInput("INT64", {3});
  request.add_raw_input_contents()->assign(std::string(16, '\0'));
  EXPECT_THAT(ErrorOf(request), HasSubstr("needs 3 x 8 bytes, but raw_input_contents has 16"));
}

TEST(GrpcInferCodecTest, RejectsTypedValuesOutOfRange) {
  inference::ModelInferRequest request = OneInput("INT8", {1});
  request.mutable_inputs(0)->mutable_contents()->add_int_contents(300);
  EXPECT_THAT(ErrorOf(request), HasSubstr("element 0 (300) is out of range for INT8"));
}

TEST(GrpcInferCodecTest, RejectsFp16WithoutRawContents) {
  EXPECT_THAT(ErrorOf(OneInput("FP16", {1})), HasSubstr("send it in raw_input_contents"));
}

TEST(GrpcInferCodecTest, ParsesVersions) {
  EXPECT_EQ(*ParseGrpcVersion(""), std::nullopt);
  EXPECT_EQ(*ParseGrpcVersion("12"), 12);
  EXPECT_FALSE(ParseGrpcVersion("1a").ok());
  EXPECT_FALSE(ParseGrpcVersion("-1").ok());
}

TEST(GrpcInferCodecTest, EncodesRawOutputs) {
  absl::StatusOr<Tensor> out = Tensor::Allocate(DataType::kInt32, {2});
  ASSERT_TRUE(out.ok());
  out->mutable_data_as<int32_t>()[1] = 7;
  InferResponse response;
  response.outputs.push_back({"y", *out});
  inference::ModelInferResponse encoded;
  EncodeGrpcInferResponse("m", 3, "id", response, &encoded);
  EXPECT_EQ(encoded.model_version(), "3");
  ASSERT_EQ(encoded.outputs_size(), 1);
  EXPECT_EQ(encoded.outputs(0).datatype(), "INT32");
  ASSERT_EQ(encoded.raw_output_contents(0).size(), 8u);
  EXPECT_EQ(encoded.raw_output_contents(0)[4], 7);
}

TEST(GrpcInferCodecTest, SharedMemoryInputsHaveNoRawEntryAndOutputsKeepTheirPlace) {
  testing::ShmObject object(32);
  object.WriteValues<int32_t>(4, {5, 6});
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("alice", "io", object.key(), 0, 32).ok());
  const SharedMemoryScope alice(registry, "alice");
  inference::ModelInferRequest request = OneInput("INT32", {2});
  auto& shm = *request.mutable_inputs(0)->mutable_parameters();
  shm["shared_memory_region"].set_string_param("io");
  shm["shared_memory_byte_size"].set_int64_param(8);
  shm["shared_memory_offset"].set_int64_param(4);
  auto* second = request.add_inputs();
  second->set_name("w");
  second->set_datatype("INT32");
  second->add_shape(1);
  const int32_t w = 9;
  request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(&w), 4);
  auto* y = request.add_outputs();
  y->set_name("y");
  (*y->mutable_parameters())["shared_memory_region"].set_string_param("io");
  (*y->mutable_parameters())["shared_memory_byte_size"].set_uint64_param(8);
  (*y->mutable_parameters())["shared_memory_offset"].set_int64_param(16);
  request.add_outputs()->set_name("z");

  SharedMemoryOutputs outputs;
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      DecodeGrpcInferRequest(request, &alice, &outputs);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ((*decoded)->inputs.size(), 2u);
  EXPECT_EQ((*decoded)->inputs[0].tensor.data_as<int32_t>()[1], 6);
  EXPECT_EQ((*decoded)->inputs[1].tensor.data_as<int32_t>()[0], 9);
  ASSERT_NE(outputs.Find("y"), nullptr);
  EXPECT_EQ(outputs.Find("y")->offset, 16u);

  InferResponse response;
  response.outputs.push_back({"y", Tensor::Allocate(DataType::kInt32, {2}).value()});
  response.outputs.push_back({"z", Tensor::Allocate(DataType::kInt32, {1}).value()});
  inference::ModelInferResponse encoded;
  EncodeGrpcInferResponse("m", 1, "", response, &encoded, &outputs);
  ASSERT_EQ(encoded.raw_output_contents_size(), 2);
  EXPECT_TRUE(encoded.raw_output_contents(0).empty());
  EXPECT_EQ(encoded.raw_output_contents(1).size(), 4u);
  EXPECT_EQ(encoded.outputs(0).parameters().at("shared_memory_region").string_param(), "io");

  // Without the registry the same request is refused, and says why.
  EXPECT_THAT(ErrorOf(request), HasSubstr("not available"));
  // Issue 30: another tenant's request naming alice's region finds nothing.
  const SharedMemoryScope bob(registry, "bob");
  SharedMemoryOutputs bob_outputs;
  decoded = DecodeGrpcInferRequest(request, &bob, &bob_outputs);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(decoded.status().message(), HasSubstr("'io' is not registered"));
}

// Issue 30: the id is echoed into every response and every streamed piece, so a 4 MB id
// multiplied one request into hundreds of megabytes.
TEST(GrpcInferCodecTest, AnIdOverTheLimitIsRefusedNamingIt) {
  inference::ModelInferRequest request = OneInput("INT32", {1});
  request.add_raw_input_contents()->assign(4, '\0');
  request.set_id(std::string(kMaxClientIdBytes, 'i'));
  EXPECT_TRUE(DecodeGrpcInferRequest(request).ok());
  request.set_id(std::string(kMaxClientIdBytes + 1, 'i'));
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeGrpcInferRequest(request);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(decoded.status().message(), HasSubstr("at most 256"));
  EXPECT_EQ(CheckGrpcRequestId(request).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace inferd

#include "frontends/grpc/grpc_generate_codec.h"

#include <cstring>
#include <string>

#include "core/types/bytes_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

// Adds a raw input as tritonclient sends it: BYTES elements are a 4-byte length + bytes.
void AddBytes(inference::ModelInferRequest& request, const std::string& name,
              const std::string& value) {
  auto* input = request.add_inputs();
  input->set_name(name);
  input->set_datatype("BYTES");
  input->add_shape(1);
  std::string raw(4, '\0');
  const uint32_t size = static_cast<uint32_t>(value.size());
  std::memcpy(raw.data(), &size, 4);
  request.add_raw_input_contents()->assign(raw + value);
}

void AddBool(inference::ModelInferRequest& request, const std::string& name, bool value) {
  auto* input = request.add_inputs();
  input->set_name(name);
  input->set_datatype("BOOL");
  input->add_shape(1);
  request.add_raw_input_contents()->assign(1, value ? '\1' : '\0');
}

inference::ModelInferRequest Prompt(const std::string& prompt) {
  inference::ModelInferRequest request;
  request.set_model_name("m");
  request.set_id("r1");
  AddBytes(request, "text_input", prompt);
  return request;
}

std::string ErrorOf(const inference::ModelInferRequest& request) {
  absl::StatusOr<GrpcGeneration> decoded = DecodeGrpcGeneration(request);
  EXPECT_FALSE(decoded.ok());
  return decoded.ok() ? "" : std::string(decoded.status().message());
}

TEST(GrpcGenerateCodecTest, ReadsThePromptStreamAndParametersLikeTritonsVllmBackend) {
  inference::ModelInferRequest request = Prompt("Hello");
  AddBool(request, "stream", true);
  AddBytes(request, "sampling_parameters",
           R"({"temperature": "0", "max_tokens": 7, "top_k": "3", "stop": ["END"],
               "presence_penalty": 0.5})");
  (*request.mutable_parameters())["seed"].set_int64_param(9);
  (*request.mutable_parameters())["top_p"].set_double_param(0.5);
  (*request.mutable_parameters())["cache_prompt"].set_bool_param(false);
  (*request.mutable_parameters())["triton_enable_empty_final_response"].set_bool_param(true);
  absl::StatusOr<GrpcGeneration> decoded = DecodeGrpcGeneration(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_TRUE(decoded->stream);
  EXPECT_FALSE(decoded->prepend_input);  // a stream sends only new text
  const GenerateRequest& r = *decoded->request;
  EXPECT_EQ(r.prompt, "Hello");
  EXPECT_EQ(r.id, "r1");
  EXPECT_EQ(r.sampling.temperature, 0);
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_EQ(r.sampling.top_k, 3);
  EXPECT_EQ(r.sampling.seed, 9u);
  EXPECT_EQ(r.sampling.top_p, 0.5);
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_FALSE(r.cache_prompt);
  EXPECT_EQ(r.sampling.presence_penalty, 0.5);
}

// Nothing silently ignored (issue 32): a sampling option inferd does not have is refused.
TEST(GrpcGenerateCodecTest, RefusesParametersItDoesNotImplement) {
  inference::ModelInferRequest beams = Prompt("Hi");
  AddBytes(beams, "sampling_parameters", R"({"use_beam_search": true})");
  EXPECT_THAT(ErrorOf(beams), HasSubstr("parameter 'use_beam_search' is not supported"));
  inference::ModelInferRequest ignore_eos = Prompt("Hi");
  (*ignore_eos.mutable_parameters())["ignore_eos"].set_bool_param(true);
  EXPECT_THAT(ErrorOf(ignore_eos), HasSubstr("parameter 'ignore_eos' is not supported"));
  inference::ModelInferRequest priority = Prompt("Hi");
  (*priority.mutable_parameters())["priority"].set_int64_param(2);
  EXPECT_THAT(ErrorOf(priority), HasSubstr("no priority levels"));
}

TEST(GrpcGenerateCodecTest, AWholeReplyPrependsThePromptUnlessExcluded) {
  absl::StatusOr<GrpcGeneration> plain = DecodeGrpcGeneration(Prompt("Hi"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->stream);
  EXPECT_TRUE(plain->prepend_input);
  inference::ModelInferRequest excluded = Prompt("Hi");
  AddBool(excluded, "exclude_input_in_output", true);
  EXPECT_FALSE(DecodeGrpcGeneration(excluded)->prepend_input);
}

TEST(GrpcGenerateCodecTest, RefusesWhatItCannotServe) {
  EXPECT_THAT(ErrorOf(inference::ModelInferRequest()), HasSubstr("'inputs' is empty"));
  inference::ModelInferRequest no_prompt;
  AddBool(no_prompt, "stream", true);
  EXPECT_THAT(ErrorOf(no_prompt), HasSubstr("'text_input' (BYTES [1], the prompt) is required"));
  inference::ModelInferRequest extra = Prompt("Hi");
  AddBytes(extra, "image", "x");
  EXPECT_THAT(ErrorOf(extra), HasSubstr("input 'image' is not one a language model reads"));
  inference::ModelInferRequest both = Prompt("Hi");
  AddBool(both, "stream", true);
  AddBool(both, "exclude_input_in_output", false);
  EXPECT_THAT(ErrorOf(both), HasSubstr("not allowed with stream"));
  inference::ModelInferRequest hot = Prompt("Hi");
  (*hot.mutable_parameters())["temperature"].set_double_param(9);
  EXPECT_THAT(ErrorOf(hot), HasSubstr("'temperature' must be a number in [0, 2]"));
  inference::ModelInferRequest json = Prompt("Hi");
  AddBytes(json, "sampling_parameters", "[1]");
  EXPECT_THAT(ErrorOf(json), HasSubstr("must be a JSON object"));
  inference::ModelInferRequest stops = Prompt("Hi");
  AddBytes(stops, "sampling_parameters", R"({"stop": ["a", "b", "c", "d", "e"]})");
  EXPECT_THAT(ErrorOf(stops), HasSubstr("more than 4"));
  inference::ModelInferRequest three = Prompt("Hi");  // found by grpc_infer_fuzzer
  AddBool(three, "stream", true);
  three.mutable_raw_input_contents()->rbegin()->assign(1, '\3');
  EXPECT_THAT(ErrorOf(three), HasSubstr("'stream' is BOOL and holds byte 3; send 0"));
  inference::ModelInferRequest deep = Prompt("Hi");
  AddBytes(deep, "sampling_parameters",
           R"({"stop": )" + std::string(1000, '[') + std::string(1000, ']') + "}");
  EXPECT_THAT(ErrorOf(deep), HasSubstr("deeper than 64 levels"));
  inference::ModelInferRequest broken = Prompt("Hi");
  AddBytes(broken, "sampling_parameters", R"({"temperature": )");
  EXPECT_THAT(ErrorOf(broken), HasSubstr("sampling_parameters': the request body is not valid"));
  inference::ModelInferRequest huge = Prompt("Hi");
  AddBytes(huge, "sampling_parameters", R"({"x": ")" + std::string(70000, 'a') + R"("})");
  EXPECT_THAT(ErrorOf(huge), HasSubstr("the server takes at most 65536"));
  inference::ModelInferRequest zero = Prompt("Hi");
  (*zero.mutable_parameters())["max_tokens"].set_int64_param(0);
  EXPECT_THAT(ErrorOf(zero), HasSubstr("'max_tokens' must be an integer in 1.."));
}

TEST(GrpcGenerateCodecTest, EveryResponseSaysWhetherItIsTheLast) {
  inference::ModelInferResponse piece;
  EncodeGrpcGeneration("m", 2, "r1", "Hel", nullptr, &piece);
  EXPECT_EQ(piece.model_version(), "2");
  EXPECT_EQ(piece.id(), "r1");
  ASSERT_EQ(piece.outputs_size(), 1);
  EXPECT_EQ(piece.outputs(0).name(), "text_output");
  EXPECT_EQ(piece.outputs(0).datatype(), "BYTES");
  EXPECT_EQ(piece.raw_output_contents(0), std::string("\3\0\0\0Hel", 7));
  EXPECT_FALSE(piece.parameters().at("triton_final_response").bool_param());

  GenerationEvent done;
  done.done = true;
  done.finish_reason = FinishReason::kLength;
  done.usage.prompt_tokens = 4;
  done.usage.completion_tokens = 8;
  inference::ModelInferResponse last;
  EncodeGrpcGeneration("m", 2, "r1", "", &done, &last);
  EXPECT_TRUE(last.parameters().at("triton_final_response").bool_param());
  EXPECT_EQ(last.parameters().at("finish_reason").string_param(), "length");
  EXPECT_EQ(last.parameters().at("completion_tokens").int64_param(), 8);
  EXPECT_EQ(last.raw_output_contents(0), std::string(4, '\0'));
}

}  // namespace
}  // namespace inferd

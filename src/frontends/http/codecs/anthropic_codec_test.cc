#include "frontends/http/codecs/anthropic_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "common/error_detail.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

class AnthropicCodecTest : public ::testing::Test {
 protected:
  absl::StatusOr<ParsedAnthropicMessages> Parse(std::string json) {
    padded_ = simdjson::padded_string(json);
    simdjson::dom::element root;
    EXPECT_FALSE(parser_.parse(padded_).get(root)) << json;
    return ParseAnthropicMessages(root);
  }
  // The field a refused body names; "(accepted)" when it was not refused.
  std::string RefusedField(std::string json) {
    absl::StatusOr<ParsedAnthropicMessages> parsed = Parse(std::move(json));
    return parsed.ok() ? "(accepted)" : ErrorField(parsed.status());
  }

  simdjson::dom::parser parser_;
  simdjson::padded_string padded_;
};

constexpr char kHead[] =
    R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"Hi"}])";

std::string With(std::string_view extra) {
  return std::string(kHead) + "," + std::string(extra) + "}";
}

TEST_F(AnthropicCodecTest, ReadsAMessagesRequest) {
  auto parsed = Parse(R"({"model": "m", "max_tokens": 32, "system": "Be brief.",
      "messages": [{"role": "user", "content": "Hi"},
                   {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
                   {"role": "user", "content": [{"type": "text", "text": "a"},
                                                {"type": "text", "text": "b"}]}],
      "temperature": 0.5, "top_p": 0.9, "top_k": 40, "stop_sequences": ["\n\n", "END"],
      "stream": true, "metadata": {"user_id": "u-1"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->call.model, "m");
  EXPECT_TRUE(parsed->call.stream);
  EXPECT_EQ(parsed->call.id, "msg_");
  const GenerateRequest& request = *parsed->request;
  EXPECT_TRUE(request.chat);
  EXPECT_EQ(request.max_tokens, 32);
  EXPECT_DOUBLE_EQ(request.sampling.temperature, 0.5);
  EXPECT_NEAR(request.sampling.top_p, 0.9, 1e-6);
  EXPECT_EQ(request.sampling.top_k, 40);
  EXPECT_THAT(request.stop, ::testing::ElementsAre("\n\n", "END"));
  ASSERT_EQ(request.messages.size(), 4u);
  EXPECT_EQ(request.messages[0].role, "system");
  EXPECT_EQ(request.messages[0].content, "Be brief.");
  EXPECT_EQ(request.messages[2].content, "Hello");
  EXPECT_EQ(request.messages[3].content, "a\nb");
}

TEST_F(AnthropicCodecTest, MaxTokensIsRequired) {
  auto parsed = Parse(R"({"model":"m","messages":[{"role":"user","content":"Hi"}]})");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("max_tokens"));
  EXPECT_EQ(RefusedField(R"({"max_tokens":8,"messages":[{"role":"user","content":"Hi"}]})"),
            "model");
}

TEST_F(AnthropicCodecTest, RefusesWhatItDoesNotImplementByName) {
  // Tools are implemented (generation_codec_tools_test.cc); server tools are not.
  EXPECT_EQ(RefusedField(With(R"("tools":[{"name":"f"}])")), "tools[0].input_schema");
  EXPECT_EQ(RefusedField(With(R"("tools":[{"type":"web_search_20250305","name":"s"}])")),
            "tools[0].type");
  EXPECT_EQ(RefusedField(With(R"("thinking":{"type":"enabled","budget_tokens":1024})")),
            "thinking");
  EXPECT_EQ(RefusedField(With(R"("metadata":{"user_id":"u","tier":"x"})")), "metadata.tier");
  EXPECT_EQ(RefusedField(
                R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":[
      {"type":"image","source":{"type":"base64","media_type":"image/png","data":""}}]}]})"),
            "messages[0].content[0].type");
  EXPECT_EQ(RefusedField(
                R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":[
      {"type":"text","text":"Hi","cache_control":{"type":"ephemeral"}}]}]})"),
            "messages[0].content[0].cache_control");
  EXPECT_EQ(RefusedField(
                R"({"model":"m","max_tokens":8,"system":[{"type":"text","text":"S",
      "citations":[]}],"messages":[{"role":"user","content":"Hi"}]})"),
            "system[0].citations");
  // A null asks for nothing.
  EXPECT_EQ(RefusedField(With(R"("tools":null)")), "(accepted)");
}

TEST_F(AnthropicCodecTest, BoundsEveryValue) {
  EXPECT_EQ(RefusedField(With(R"("temperature":1.5)")), "temperature");
  EXPECT_EQ(RefusedField(With(R"("top_p":0)")), "top_p");
  EXPECT_EQ(RefusedField(With(R"("top_k":-1)")), "top_k");
  EXPECT_EQ(RefusedField(With(R"("stop_sequences":"END")")), "stop_sequences");
  EXPECT_EQ(RefusedField(With(R"("stop_sequences":["a","b","c","d","e"])")), "stop_sequences");
  EXPECT_EQ(
      RefusedField(R"({"model":"m","max_tokens":0,"messages":[{"role":"user","content":"Hi"}]})"),
      "max_tokens");
  EXPECT_EQ(RefusedField(R"({"model":"m","max_tokens":8,"messages":[]})"), "messages");
  EXPECT_EQ(
      RefusedField(R"({"model":"m","max_tokens":8,"messages":[{"role":"system","content":"S"}]})"),
      "messages[0].role");
  // Continuing an assistant turn (prefill) is not something a chat template
  // does.
  EXPECT_EQ(RefusedField(
                R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"Hi"},
      {"role":"assistant","content":"Sure"}]})"),
            "messages");
}

TEST(AnthropicEncodeTest, AReplyHasAnthropicsMessageShape) {
  AnthropicCall call{"m", "msg_1", false, nullptr};
  GenerationEvent done;
  done.done = true;
  done.finish_reason = FinishReason::kStop;
  done.stop_sequence = "END";
  done.usage.prompt_tokens = 7;
  done.usage.completion_tokens = 3;
  HttpReply reply = EncodeAnthropicMessage(call, "Hello", done);
  rapidjson::Document d;
  d.Parse(reply.body.c_str());
  ASSERT_TRUE(d.IsObject()) << reply.body;
  EXPECT_STREQ(d["id"].GetString(), "msg_1");
  EXPECT_STREQ(d["type"].GetString(), "message");
  EXPECT_STREQ(d["role"].GetString(), "assistant");
  EXPECT_STREQ(d["model"].GetString(), "m");
  EXPECT_STREQ(d["content"][0]["type"].GetString(), "text");
  EXPECT_STREQ(d["content"][0]["text"].GetString(), "Hello");
  EXPECT_STREQ(d["stop_reason"].GetString(), "stop_sequence");
  EXPECT_STREQ(d["stop_sequence"].GetString(), "END");
  EXPECT_EQ(d["usage"]["input_tokens"].GetInt(), 7);
  EXPECT_EQ(d["usage"]["output_tokens"].GetInt(), 3);
  done.stop_sequence.clear();
  EXPECT_THAT(EncodeAnthropicMessage(call, "x", done).body,
              HasSubstr(R"("stop_reason":"end_turn","stop_sequence":null)"));
  done.finish_reason = FinishReason::kLength;
  EXPECT_THAT(EncodeAnthropicMessage(call, "x", done).body,
              HasSubstr(R"("stop_reason":"max_tokens")"));
}

TEST(AnthropicEncodeTest, AStreamHasAnthropicsEventsInOrder) {
  AnthropicCall call{"m", "msg_1", true, nullptr};
  GenerationEvent done;
  done.done = true;
  done.text = "!";
  done.finish_reason = FinishReason::kLength;
  done.usage.prompt_tokens = 5;
  done.usage.completion_tokens = 2;
  const std::string stream = EncodeAnthropicStreamStart(call) + EncodeAnthropicStreamText("Hi") +
                             EncodeAnthropicStreamEnd(done);
  std::vector<std::string> names;
  for (size_t at = stream.find("event: "); at != std::string::npos;
       at = stream.find("event: ", at + 1)) {
    names.push_back(stream.substr(at + 7, stream.find('\n', at) - at - 7));
  }
  EXPECT_THAT(names, ::testing::ElementsAre("message_start", "content_block_start", "ping",
                                            "content_block_delta", "content_block_delta",
                                            "content_block_stop", "message_delta", "message_stop"));
  EXPECT_THAT(stream, HasSubstr(R"({"type":"text_delta","text":"Hi"})"));
  EXPECT_THAT(stream, HasSubstr(R"("delta":{"stop_reason":"max_tokens","stop_sequence":null},)"
                                R"("usage":{"input_tokens":5,"output_tokens":2})"));
}

TEST(AnthropicEncodeTest, ErrorsHaveAnthropicsShapeAndType) {
  EXPECT_EQ(AnthropicErrorBody(401, absl::UnauthenticatedError("the API key is not valid")),
            R"({"type":"error","error":{"type":"authentication_error",)"
            R"("message":"the API key is not valid"}})");
  EXPECT_THAT(AnthropicErrorBody(400, absl::InvalidArgumentError("x")),
              HasSubstr("invalid_request_error"));
  EXPECT_THAT(AnthropicErrorBody(403, absl::PermissionDeniedError("x")),
              HasSubstr("permission_error"));
  EXPECT_THAT(AnthropicErrorBody(404, absl::NotFoundError("x")), HasSubstr("not_found_error"));
  EXPECT_THAT(AnthropicErrorBody(429, absl::ResourceExhaustedError("x")),
              HasSubstr("rate_limit_error"));
  EXPECT_THAT(AnthropicErrorBody(500, absl::InternalError("x")), HasSubstr("api_error"));
  EXPECT_THAT(AnthropicErrorBody(503, absl::UnavailableError("x")), HasSubstr("overloaded_error"));
  EXPECT_EQ(EncodeAnthropicStreamError(absl::UnavailableError("the model was unloaded")),
            "event: error\ndata: "
            R"({"type":"error","error":{"type":"overloaded_error",)"
            R"("message":"the model was unloaded"}})"
            "\n\n");
}

}  // namespace
}  // namespace inferd

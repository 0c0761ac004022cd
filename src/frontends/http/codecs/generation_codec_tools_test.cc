#include "frontends/http/codecs/generation_codec_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error_detail.h"
#include "frontends/http/codecs/anthropic_codec.h"
#include "frontends/http/codecs/generation_codec.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ToolCodecTest : public ::testing::Test {
 protected:
  absl::StatusOr<ParsedGeneration> Chat(std::string_view extra) {
    padded_ = simdjson::padded_string(
        std::string(R"({"model":"m","messages":[{"role":"user","content":"Hi"}])") +
        (extra.empty() ? "" : ",") + std::string(extra) + "}");
    simdjson::dom::element root;
    EXPECT_FALSE(parser_.parse(padded_).get(root));
    return ParseOpenAiRequest(root, GenerationApi::kChat);
  }
  std::string RefusedField(std::string_view extra) {
    absl::StatusOr<ParsedGeneration> parsed = Chat(extra);
    return parsed.ok() ? "(accepted)" : ErrorField(parsed.status());
  }
  absl::StatusOr<ParsedAnthropicMessages> Messages(std::string_view json) {
    padded_ = simdjson::padded_string(json);
    simdjson::dom::element root;
    EXPECT_FALSE(parser_.parse(padded_).get(root));
    return ParseAnthropicMessages(root);
  }

  simdjson::dom::parser parser_;
  simdjson::padded_string padded_;
};

constexpr char kWeather[] =
    R"("tools":[{"type":"function","function":{"name":"get_weather","description":"Weather",)"
    R"("parameters":{"type":"object","properties":{"city":{"type":"string"}},)"
    R"("required":["city"]}}}])";

TEST_F(ToolCodecTest, ForcedToolHoldsTheOutputToItsCallSchema) {
  auto parsed = Chat(std::string(kWeather) +
                     R"(,"tool_choice":{"type":"function","function":{"name":"get_weather"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const GenerateRequest& request = *parsed->request;
  ASSERT_NE(parsed->call.tools, nullptr);
  EXPECT_EQ(request.output_format.kind, OutputFormat::Kind::kJsonSchema);
  EXPECT_EQ(request.output_format.field, "tools");
  EXPECT_EQ(request.output_format.text,
            R"({"type":"object","properties":{"tool_calls":{"type":"array","items":{"type":)"
            R"("object","properties":{"name":{"const":"get_weather"},"arguments":{"type":)"
            R"("object","properties":{"city":{"type":"string"}},"required":["city"]}},)"
            R"("required":["name","arguments"]},"minItems":1}},"required":["tool_calls"]})");
  ASSERT_EQ(request.messages.size(), 2u);
  EXPECT_EQ(request.messages[0].role, "system");
  EXPECT_THAT(request.messages[0].content, HasSubstr(R"("name":"get_weather")"));
}

TEST_F(ToolCodecTest, AutoAllowsAResponseAndNoneAddsNothing) {
  auto automatic = Chat(std::string(kWeather) + R"(,"parallel_tool_calls":false)");
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_THAT(automatic->request->output_format.text, StartsWith(R"({"anyOf":[)"));
  EXPECT_THAT(automatic->request->output_format.text, HasSubstr(R"("tool_call":)"));
  EXPECT_THAT(automatic->request->output_format.text, HasSubstr(R"("response":)"));
  auto none = Chat(std::string(kWeather) + R"(,"tool_choice":"none")");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->call.tools, nullptr);
  EXPECT_EQ(none->request->output_format.kind, OutputFormat::Kind::kText);
  EXPECT_EQ(none->request->messages.size(), 1u);
}

TEST_F(ToolCodecTest, RefusesBadToolsNamingTheField) {
  EXPECT_EQ(RefusedField(R"("tools":[{"type":"function","function":{"name":"a b"}}])"),
            "tools[0].function.name");
  EXPECT_EQ(RefusedField(R"("tools":[{"type":"retrieval"}])"), "tools[0].type");
  EXPECT_EQ(RefusedField(R"("tools":[{"type":"function","function":{"name":"f","x":1}}])"),
            "tools[0].function.x");
  EXPECT_EQ(RefusedField(R"("tools":[{"type":"function","function":{"name":"f"}},)"
                         R"({"type":"function","function":{"name":"f"}}])"),
            "tools[1]");
  std::string many = R"("tools":[)";
  for (int i = 0; i <= 128; ++i) {
    many += std::string(i ? "," : "") + R"({"type":"function","function":{"name":"f)" +
            std::to_string(i) + R"("}})";
  }
  EXPECT_EQ(RefusedField(many + "]"), "tools");
  EXPECT_EQ(RefusedField(std::string(kWeather) + R"(,"tool_choice":"always")"), "tool_choice");
  EXPECT_EQ(RefusedField(std::string(kWeather) +
                         R"(,"tool_choice":{"type":"function","function":{"name":"nope"}})"),
            "tool_choice");
  EXPECT_EQ(RefusedField(R"("tool_choice":"required")"), "tool_choice");
  EXPECT_EQ(RefusedField(std::string(kWeather) + R"(,"response_format":{"type":"json_object"})"),
            "tools");
  EXPECT_EQ(RefusedField(std::string(kWeather) + R"(,"logprobs":true)"), "logprobs");
}

TEST_F(ToolCodecTest, HistoryCallsAndResultsBecomeTheFormatsJson) {
  padded_ = simdjson::padded_string(std::string(
      R"({"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":null,)"
      R"("tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather",)"
      R"("arguments":"{\"city\": \"Paris\"}"}}]},)"
      R"({"role":"tool","tool_call_id":"c1","content":"sunny"}]})"));
  simdjson::dom::element root;
  ASSERT_FALSE(parser_.parse(padded_).get(root));
  simdjson::dom::object body;
  ASSERT_FALSE(root.get(body));
  auto messages = ParseChatMessages(body);
  ASSERT_TRUE(messages.ok()) << messages.status();
  ASSERT_EQ(messages->size(), 3u);
  EXPECT_EQ((*messages)[1].content,
            R"({"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris"}}]})");
  EXPECT_EQ((*messages)[2].role, "user");
  EXPECT_EQ((*messages)[2].content,
            R"({"tool_response":{"tool":"get_weather","tool_call_id":"c1","content":"sunny"}})");
}

TEST_F(ToolCodecTest, ChatRequestCarriesTheToolsAndHistoryAsSentForTheModelsOwnFormat) {
  absl::StatusOr<ParsedGeneration> parsed =
      Chat(std::string(kWeather) +
           R"(,"tool_choice":{"type":"function","function":{"name":"get_weather"}},)"
           R"("parallel_tool_calls":false)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const GenerateRequest& request = *parsed->request;
  // The generic format is still written (a template that knows no tools uses it) ...
  EXPECT_EQ(request.output_format.kind, OutputFormat::Kind::kJsonSchema);
  // ... and the tools as sent, for a model with a format of its own.
  ASSERT_NE(request.tools, nullptr);
  ASSERT_EQ(request.tools->functions.size(), 1u);
  EXPECT_EQ(request.tools->functions[0].name, "get_weather");
  EXPECT_EQ(request.tools->functions[0].description, "Weather");
  EXPECT_THAT(request.tools->functions[0].parameters, HasSubstr(R"("city")"));
  EXPECT_EQ(request.tools->choice, GenerationTools::Choice::kNamed);
  EXPECT_EQ(request.tools->named, "get_weather");
  EXPECT_FALSE(request.tools->parallel);
  EXPECT_EQ(request.tools->call_id_prefix, "call_");
  ASSERT_EQ(request.tools->messages.size(), 1u);
  EXPECT_EQ(request.tools->messages[0].content, "Hi");
  // No tools, or tool_choice none: nothing for the model.
  EXPECT_EQ(Chat("")->request->tools, nullptr);
  EXPECT_EQ(Chat(std::string(kWeather) + R"(,"tool_choice":"none")")->request->tools, nullptr);
}

TEST_F(ToolCodecTest, HistoryKeepsCallsAndResultsAsSentBesideTheGenericTurns) {
  padded_ = simdjson::padded_string(std::string(
      R"({"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":null,)"
      R"("tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather",)"
      R"("arguments":"{\"city\": \"Paris\"}"}}]},)"
      R"({"role":"tool","tool_call_id":"c1","content":"sunny"}]})"));
  simdjson::dom::element root;
  ASSERT_FALSE(parser_.parse(padded_).get(root));
  simdjson::dom::object body;
  ASSERT_FALSE(root.get(body));
  std::vector<ToolTurn> turns;
  auto messages = ParseChatMessages(body, &turns);
  ASSERT_TRUE(messages.ok()) << messages.status();
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns[1].role, "assistant");
  EXPECT_EQ(turns[1].content, "");
  ASSERT_EQ(turns[1].tool_calls.size(), 1u);
  EXPECT_EQ(turns[1].tool_calls[0].id, "c1");
  EXPECT_EQ(turns[1].tool_calls[0].name, "get_weather");
  EXPECT_EQ(turns[1].tool_calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_EQ(turns[2].role, "tool");
  EXPECT_EQ(turns[2].content, "sunny");
  EXPECT_EQ(turns[2].tool_call_id, "c1");
  EXPECT_EQ(turns[2].tool_name, "get_weather");
}

TEST_F(ToolCodecTest, ReplyReadByTheModelIsUsedInsteadOfTheGenericJson) {
  GenerationEvent done;
  done.done = true;
  // Without the model's reading: the generic format.
  EXPECT_EQ(ReadToolReply(R"({"response": "Hello"})", done, "call_").content, "Hello");
  done.tool_reply.emplace();
  done.tool_reply->content = "Let me look.";
  done.tool_reply->calls.push_back(GeneratedToolCall{"call_x", "get_weather", R"({"city":"P"})"});
  ToolReply reply = ReadToolReply("<tool_call>...</tool_call>", done, "call_");
  EXPECT_EQ(reply.content, "Let me look.");
  ASSERT_EQ(reply.calls.size(), 1u);
  EXPECT_EQ(reply.calls[0].id, "call_x");
  EXPECT_EQ(reply.calls[0].name, "get_weather");
  EXPECT_EQ(reply.calls[0].arguments, R"({"city":"P"})");
}

TEST_F(ToolCodecTest, ParsesRepliesIntoCallsOrText) {
  ToolReply calls = ParseToolReply(
      R"({"tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]})",
      "call_");
  ASSERT_EQ(calls.calls.size(), 2u);
  EXPECT_EQ(calls.calls[0].name, "a");
  EXPECT_EQ(calls.calls[0].arguments, R"({"x":1})");
  EXPECT_THAT(calls.calls[0].id, StartsWith("call_"));
  EXPECT_NE(calls.calls[0].id, calls.calls[1].id);
  EXPECT_EQ(ParseToolReply(R"({"tool_call": {"name": "a", "arguments": {}}})", "x").calls.size(),
            1u);
  EXPECT_EQ(ParseToolReply(R"({"response": "Hello"})", "x").content, "Hello");
  // Cut by max_tokens: the text as it is.
  ToolReply cut = ParseToolReply(R"({"tool_calls": [{"na)", "x");
  EXPECT_TRUE(cut.calls.empty());
  EXPECT_EQ(cut.content, R"({"tool_calls": [{"na)");
}

TEST_F(ToolCodecTest, EncodesOpenAiToolCallsAndTheirStream) {
  auto parsed = Chat(std::string(kWeather) + R"(,"tool_choice":"required")");
  ASSERT_TRUE(parsed.ok());
  GenerationChoice choice;
  choice.text = R"({"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris"}}]})";
  choice.done.finish_reason = FinishReason::kStop;
  const HttpReply reply = EncodeGenerationReply(parsed->call, std::span(&choice, 1));
  EXPECT_THAT(reply.body, HasSubstr(R"("content":null,"tool_calls":[{"id":"call_)"));
  EXPECT_THAT(reply.body, HasSubstr(R"("arguments":"{\"city\":\"Paris\"}")"));
  EXPECT_THAT(reply.body, HasSubstr(R"("finish_reason":"tool_calls")"));
  const std::string events = EncodeStreamToolChoiceEnd(parsed->call, choice.text, choice.done);
  EXPECT_THAT(events, HasSubstr(R"("delta":{"tool_calls":[{"index":0,"id":"call_)"));
  EXPECT_THAT(events, HasSubstr(R"("finish_reason":"tool_calls")"));
}

TEST_F(ToolCodecTest, AnthropicToolsGiveToolUseBlocks) {
  auto parsed = Messages(
      R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"Hi"}],)"
      R"("tools":[{"name":"get_weather","input_schema":{"type":"object"}}],)"
      R"("tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_NE(parsed->call.tools, nullptr);
  EXPECT_FALSE(parsed->call.tools->parallel);
  GenerationEvent done;
  const std::string text = R"({"tool_call":{"name":"get_weather","arguments":{"city":"Oslo"}}})";
  const HttpReply reply = EncodeAnthropicMessage(parsed->call, text, done);
  EXPECT_THAT(reply.body, HasSubstr(R"({"type":"tool_use","id":"toolu_)"));
  EXPECT_THAT(reply.body, HasSubstr(R"("input":{"city":"Oslo"})"));
  EXPECT_THAT(reply.body, HasSubstr(R"("stop_reason":"tool_use")"));
  const std::string events = EncodeAnthropicStreamToolEnd(text, done);
  EXPECT_THAT(events, HasSubstr(R"("content_block":{"type":"tool_use")"));
  EXPECT_THAT(events, HasSubstr(R"({"type":"input_json_delta","partial_json":"{\"city\")"));
  auto refused = Messages(
      R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"Hi"}],)"
      R"("tools":[{"name":"t","input_schema":{}}],"tool_choice":{"type":"tool","name":"u"}})");
  EXPECT_EQ(ErrorField(refused.status()), "tool_choice.name");
}

}  // namespace
}  // namespace inferd

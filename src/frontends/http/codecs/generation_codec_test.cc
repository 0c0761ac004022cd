#include "frontends/http/codecs/generation_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "common/error_detail.h"
#include "common/strings.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

// Parses `json` with simdjson (kept alive in the fixture) and runs the OpenAI parser.
class GenerationCodecTest : public ::testing::Test {
 protected:
  absl::StatusOr<ParsedGeneration> Parse(std::string json, GenerationApi api) {
    padded_ = simdjson::padded_string(json);
    simdjson::dom::element root;
    EXPECT_FALSE(parser_.parse(padded_).get(root));
    return ParseOpenAiRequest(root, api);
  }
  absl::StatusOr<ParsedGeneration> ParseKServe(std::string json) {
    padded_ = simdjson::padded_string(json);
    simdjson::dom::element root;
    EXPECT_FALSE(parser_.parse(padded_).get(root));
    return ParseKServeGenerate(root, false);
  }
  static std::string ErrorOf(const absl::StatusOr<ParsedGeneration>& parsed) {
    return parsed.ok() ? "" : std::string(parsed.status().message());
  }

  simdjson::dom::parser parser_;
  simdjson::padded_string padded_;
};

TEST_F(GenerationCodecTest, ReadsAChatRequest) {
  auto parsed = Parse(R"({"model": "m", "messages": [{"role": "system", "content": "S"},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
      "max_tokens": 7, "temperature": 0, "top_p": 0.5, "top_k": 3, "seed": 9, "stop": "END",
      "stream": true, "stream_options": {"include_usage": true}})",
                      GenerationApi::kChat);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const GenerateRequest& r = *parsed->request;
  EXPECT_EQ(parsed->call.model, "m");
  EXPECT_TRUE(parsed->call.stream && parsed->call.include_usage);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1].content, "a\nb");
  EXPECT_TRUE(r.chat);
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_EQ(r.sampling.temperature, 0);
  EXPECT_EQ(r.sampling.top_p, 0.5);
  EXPECT_EQ(r.sampling.top_k, 3);
  EXPECT_EQ(r.sampling.seed, 9u);
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
}

// Nothing silently ignored (issue 32): a field inferd does not implement is refused by name,
// unless it holds the value that asks for nothing (what client libraries send by default).
TEST_F(GenerationCodecTest, RefusesFieldsItDoesNotImplementAndAcceptsTheirNeutralValues) {
  const std::string messages = R"("messages": [{"role": "user", "content": "x"}])";
  for (const char* field :
       {R"("user": "u1")", R"("no_such_field": 1)", R"("stream_options": {"chunked": true})"}) {
    auto parsed =
        Parse(StrCat(R"({"model": "m", )", messages, ", ", field, "}"), GenerationApi::kChat);
    ASSERT_FALSE(parsed.ok()) << field;
    EXPECT_THAT(ErrorOf(parsed), HasSubstr("is not supported by this server")) << field;
  }
  auto named =
      Parse(R"({"model": "m", "messages": [{"role": "user", "content": "x", "name": "a"}]})",
            GenerationApi::kChat);
  EXPECT_THAT(ErrorOf(named), HasSubstr("messages[0].name is not supported"));
  auto neutral = Parse(StrCat(R"({"model": "m", )", messages,
                              R"(, "logprobs": false, "response_format": {"type": "text"},
      "tools": [], "tool_choice": "none", "parallel_tool_calls": true, "store": false})"),
                       GenerationApi::kChat);
  EXPECT_TRUE(neutral.ok()) << neutral.status();
  auto suffix =
      Parse(R"({"model": "m", "prompt": "p", "suffix": "s"})", GenerationApi::kCompletion);
  EXPECT_THAT(ErrorOf(suffix), HasSubstr("'suffix' is not supported"));
  auto echo = Parse(R"({"model": "m", "prompt": "p", "echo": true})", GenerationApi::kCompletion);
  EXPECT_THAT(ErrorOf(echo), HasSubstr("'echo' is not supported"));
  EXPECT_THAT(ErrorOf(ParseKServe(R"({"text_input": "p", "parameters": {"beam_width": 2}})")),
              HasSubstr("'beam_width' in 'parameters' is not supported"));
  // Parameters in one place: a sampling field beside "parameters" would be ignored.
  EXPECT_THAT(ErrorOf(ParseKServe(R"({"text_input": "p", "temperature": 0, "parameters": {}})")),
              HasSubstr("'temperature' is not supported"));
  EXPECT_THAT(ErrorOf(ParseKServe(R"({"text_input": "p", "parameters": {"stream": true}})")),
              HasSubstr("generate never streams"));
}

// Structured output (issue 32 item 3): the format is only read here; the model compiles it.
TEST_F(GenerationCodecTest, ReadsResponseFormatAndGrammar) {
  const std::string messages = R"("messages": [{"role": "user", "content": "x"}])";
  auto json_object = Parse(
      StrCat(R"({"model": "m", )", messages, R"(, "response_format": {"type": "json_object"}})"),
      GenerationApi::kChat);
  ASSERT_TRUE(json_object.ok()) << json_object.status();
  EXPECT_EQ(json_object->request->output_format.kind, OutputFormat::Kind::kJsonObject);
  auto schema = Parse(R"({"model": "m", "prompt": "p", "response_format": {"type": "json_schema",
      "json_schema": {"name": "n", "strict": true, "schema": {"type": "object",
      "properties": {"a": {"type": "integer"}}}}}})",
                      GenerationApi::kCompletion);
  ASSERT_TRUE(schema.ok()) << schema.status();
  EXPECT_EQ(schema->request->output_format.kind, OutputFormat::Kind::kJsonSchema);
  EXPECT_EQ(schema->request->output_format.text,
            R"({"type":"object","properties":{"a":{"type":"integer"}}})");
  auto grammar = Parse(R"({"model": "m", "prompt": "p", "grammar": "root ::= \"yes\""})",
                       GenerationApi::kCompletion);
  ASSERT_TRUE(grammar.ok()) << grammar.status();
  EXPECT_EQ(grammar->request->output_format.kind, OutputFormat::Kind::kGrammar);
  EXPECT_EQ(grammar->request->output_format.text, R"(root ::= "yes")");
  auto text = Parse(R"({"model": "m", "prompt": "p", "response_format": {"type": "text"}})",
                    GenerationApi::kCompletion);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->request->output_format.kind, OutputFormat::Kind::kText);
}

TEST_F(GenerationCodecTest, RefusesResponseFormatsItDoesNotImplementByName) {
  auto parse = [this](const std::string& fields) {
    return ErrorOf(Parse(StrCat(R"({"model": "m", "prompt": "p", )", fields, "}"),
                         GenerationApi::kCompletion));
  };
  EXPECT_THAT(parse(R"("response_format": {"type": "xml"})"),
              HasSubstr("'response_format' type 'xml' is not supported"));
  EXPECT_THAT(parse(R"("response_format": {"type": "json_object", "schema": {}})"),
              HasSubstr("'schema' in 'response_format' is not supported"));
  EXPECT_THAT(parse(R"("response_format": {"type": "json_schema", "json_schema": {"schema": {},
      "nullable": true}})"),
              HasSubstr("'nullable' in 'response_format.json_schema' is not supported"));
  EXPECT_THAT(parse(R"("response_format": {"type": "json_schema", "json_schema": {"name": "n"}})"),
              HasSubstr("'response_format.json_schema.schema' is required"));
  EXPECT_THAT(parse(R"("grammar": 5)"), HasSubstr("'grammar' must be a string"));
  EXPECT_THAT(parse(R"("grammar": "root ::= \"a\"", "response_format": {"type": "json_object"})"),
              HasSubstr("not both"));
}

TEST_F(GenerationCodecTest, ReadsPenaltiesMinPAndLogitBias) {
  auto parsed = Parse(R"({"model": "m", "prompt": "p", "presence_penalty": 0.5,
      "frequency_penalty": -1, "repetition_penalty": 1.3, "repeat_last_n": 32, "min_p": 0.05,
      "logit_bias": {"42": -100, "7": 2.5}})",
                      GenerationApi::kCompletion);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const SamplingParams& s = parsed->request->sampling;
  EXPECT_EQ(s.presence_penalty, 0.5);
  EXPECT_EQ(s.frequency_penalty, -1);
  EXPECT_EQ(s.repetition_penalty, 1.3);
  EXPECT_EQ(s.penalty_last_n, 32);
  EXPECT_EQ(s.min_p, 0.05);
  ASSERT_EQ(s.logit_bias.size(), 2u);
  EXPECT_EQ(s.logit_bias[0].token, 42);
  EXPECT_EQ(s.logit_bias[0].bias, -100);
  EXPECT_THAT(ErrorOf(Parse(R"({"model": "m", "prompt": "p", "logit_bias": {"x": 1}})",
                            GenerationApi::kCompletion)),
              HasSubstr("keys are token ids"));
  EXPECT_THAT(ErrorOf(Parse(R"({"model": "m", "prompt": "p", "logit_bias": {"1": 101}})",
                            GenerationApi::kCompletion)),
              HasSubstr("[-100, 100]"));
  EXPECT_THAT(ErrorOf(Parse(R"({"model": "m", "prompt": "p", "presence_penalty": 3})",
                            GenerationApi::kCompletion)),
              HasSubstr("'presence_penalty' must be in [-2, 2]"));
}

TEST_F(GenerationCodecTest, CompletionsDefaultToSixteenTokensLikeOpenAi) {
  auto parsed = Parse(R"({"model": "m", "prompt": ["hello"]})", GenerationApi::kCompletion);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->request->prompt, "hello");
  EXPECT_EQ(parsed->request->max_tokens, 16);
  EXPECT_FALSE(parsed->request->chat);
}

TEST_F(GenerationCodecTest, BoundsEveryClientNumber) {
  const std::string chat = R"("model": "m", "messages": [{"role": "user", "content": "x"}])";
  EXPECT_NE(ErrorOf(Parse("{" + chat + R"(, "temperature": 2.5})", GenerationApi::kChat))
                .find("temperature"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(Parse("{" + chat + R"(, "max_tokens": 0})", GenerationApi::kChat)).find("max_tokens"),
      std::string::npos);
  EXPECT_NE(ErrorOf(Parse("{" + chat + R"(, "top_p": 0})", GenerationApi::kChat)).find("top_p"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Parse("{" + chat + R"(, "n": 9})", GenerationApi::kChat)).find("'n'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Parse("{" + chat + R"(, "n": 0})", GenerationApi::kChat)).find("'n'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Parse("{" + chat + R"(, "stop": ["a","b","c","d","e"]})", GenerationApi::kChat))
                .find("stop"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Parse("{" + chat + R"(, "stop": ")" + std::string(300, 'x') + R"("})",
                          GenerationApi::kChat))
                .find("256"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Parse(R"({"messages": []})", GenerationApi::kChat)).find("model"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Parse(R"({"model": "m", "messages": []})", GenerationApi::kChat)).find("empty"),
            std::string::npos);
}

TEST_F(GenerationCodecTest, RefusesPromptTextOverOneMebibyteBeforeTokenising) {
  const std::string big((1 << 20) + 1, 'a');
  EXPECT_NE(
      ErrorOf(Parse(R"({"model": "m", "prompt": ")" + big + R"("})", GenerationApi::kCompletion))
          .find("1048577 bytes"),
      std::string::npos);
  // Two messages each under the limit, together over it.
  const std::string half((1 << 19) + 1, 'a');
  EXPECT_NE(ErrorOf(Parse(R"({"model": "m", "messages": [{"role": "user", "content": ")" + half +
                              R"("}, {"role": "user", "content": ")" + half + R"("}]})",
                          GenerationApi::kChat))
                .find("at most 1048576 bytes"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ParseKServe(R"({"text_input": ")" + big + R"("})")).find("bytes"),
            std::string::npos);
  EXPECT_TRUE(
      Parse(R"({"model": "m", "prompt": ")" + half + R"("})", GenerationApi::kCompletion).ok());
}

TEST_F(GenerationCodecTest, KServeParametersMayBeNestedOrTopLevel) {
  auto nested = ParseKServe(R"({"text_input": "hi", "parameters": {"max_tokens": 3}})");
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(nested->request->max_tokens, 3);
  auto top = ParseKServe(R"({"text_input": "hi", "max_tokens": 5, "temperature": 0})");
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->request->max_tokens, 5);
  EXPECT_EQ(top->request->sampling.temperature, 0);
  EXPECT_FALSE(ParseKServe(R"({"parameters": {}})").ok());
}

TEST(GenerationEncodeTest, ChatReplyCarriesTextFinishReasonAndUsage) {
  GenerationCall call;
  call.api = GenerationApi::kChat;
  call.model = "m";
  call.id = "chatcmpl-1";
  GenerationEvent done;
  done.done = true;
  done.finish_reason = FinishReason::kLength;
  done.usage.prompt_tokens = 5;
  done.usage.completion_tokens = 2;
  GenerationChoice choice;
  choice.text = "hi \"there\"";
  choice.done = done;
  HttpReply reply = EncodeGenerationReply(call, std::span(&choice, 1));
  rapidjson::Document d;
  d.Parse(reply.body.c_str());
  ASSERT_FALSE(d.HasParseError()) << reply.body;
  EXPECT_STREQ(d["object"].GetString(), "chat.completion");
  EXPECT_STREQ(d["choices"][0]["message"]["content"].GetString(), "hi \"there\"");
  EXPECT_STREQ(d["choices"][0]["finish_reason"].GetString(), "length");
  EXPECT_EQ(d["usage"]["total_tokens"].GetInt(), 7);
}

TEST(GenerationEncodeTest, StreamEndsWithFinishUsageAndDone) {
  GenerationCall call;
  call.api = GenerationApi::kChat;
  call.include_usage = true;
  GenerationEvent done;
  done.finish_reason = FinishReason::kStop;
  const std::string end = EncodeStreamEnd(call, done);
  EXPECT_NE(end.find("\"finish_reason\":\"stop\""), std::string::npos) << end;
  EXPECT_NE(end.find("\"usage\""), std::string::npos) << end;
  EXPECT_TRUE(end.ends_with("data: [DONE]\n\n")) << end;
  EXPECT_TRUE(EncodeStreamText(call, "x").starts_with("data: {")) << EncodeStreamText(call, "x");
}

TEST(GenerationEncodeTest, SeveralChoicesAreIndexedAndTheirCompletionsSummed) {
  GenerationCall call;
  call.api = GenerationApi::kCompletion;
  call.n = 2;
  std::vector<GenerationChoice> choices(2);
  choices[0].text = "a";
  choices[0].done.finish_reason = FinishReason::kStop;
  choices[0].done.usage.prompt_tokens = 5;
  choices[0].done.usage.completion_tokens = 1;
  choices[1].text = "bb";
  choices[1].done.finish_reason = FinishReason::kLength;
  choices[1].done.usage.prompt_tokens = 5;
  choices[1].done.usage.completion_tokens = 3;
  rapidjson::Document d;
  const HttpReply reply = EncodeGenerationReply(call, choices);
  d.Parse(reply.body.c_str());
  ASSERT_FALSE(d.HasParseError()) << reply.body;
  ASSERT_EQ(d["choices"].Size(), 2u);
  EXPECT_EQ(d["choices"][1]["index"].GetInt(), 1);
  EXPECT_STREQ(d["choices"][1]["text"].GetString(), "bb");
  EXPECT_STREQ(d["choices"][1]["finish_reason"].GetString(), "length");
  // The prompt once, the completions together.
  EXPECT_EQ(d["usage"]["prompt_tokens"].GetInt(), 5);
  EXPECT_EQ(d["usage"]["completion_tokens"].GetInt(), 4);
  // A stream's chunks say which choice they belong to.
  EXPECT_NE(EncodeStreamText(call, "x", 1).find("\"index\":1"), std::string::npos);
  EXPECT_NE(EncodeStreamChoiceEnd(call, choices[1].done, 1).find("\"index\":1"), std::string::npos);
  EXPECT_EQ(EncodeStreamFinish(call, TotalUsage(choices)), "data: [DONE]\n\n");
}

TEST(GenerationEncodeTest, OpenAiErrorsHaveOpenAisShape) {
  HttpReply reply =
      GenerationErrorReply(GenerationApi::kChat, absl::ResourceExhaustedError("queue is full"));
  EXPECT_EQ(reply.status, 429u);
  EXPECT_EQ(
      reply.body,
      R"({"error":{"message":"queue is full","type":"requests","param":null,"code":"rate_limit_exceeded"}})");
  EXPECT_EQ(GenerationErrorReply(GenerationApi::kKServe, absl::NotFoundError("no")).body,
            R"({"error":"no"})");
}

TEST_F(GenerationCodecTest, RefusedFieldsAreNamedForOpenAisParam) {
  auto refused_field = [&](const std::string& json) {
    absl::StatusOr<ParsedGeneration> parsed = Parse(json, GenerationApi::kChat);
    EXPECT_FALSE(parsed.ok()) << json;
    return parsed.ok() ? std::string("(accepted)") : ErrorField(parsed.status());
  };
  const std::string chat = R"({"model":"m","messages":[{"role":"user","content":"Hi"}])";
  EXPECT_EQ(refused_field(R"({"messages":[]})"), "model");
  EXPECT_EQ(refused_field(R"({"model":"m"})"), "messages");
  EXPECT_EQ(refused_field(chat + R"(,"temperature":7})"), "temperature");
  EXPECT_EQ(refused_field(chat + R"(,"max_tokens":0})"), "max_tokens");
  EXPECT_EQ(refused_field(chat + R"(,"tools":[{"type":"function"}]})"), "tools[0].function");
  EXPECT_EQ(refused_field(chat + R"(,"tool_choice":"required"})"), "tool_choice");
  EXPECT_EQ(refused_field(R"({"model":"m","messages":[{"role":"user","content":5}]})"),
            "messages[0].content");
}

TEST(GenerationParseTest, APromptOverTheServersLimitExceedsTheContext) {
  const absl::Status status = CheckPromptBytes(kMaxPromptBytes + 1, "prompt");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorField(status), "prompt");
  EXPECT_EQ(ErrorReasonOf(status), ErrorReason::kContextLengthExceeded);
  EXPECT_TRUE(CheckPromptBytes(kMaxPromptBytes, "prompt").ok());
}

TEST_F(GenerationCodecTest, ReadsLogprobsInEachApisShape) {
  const std::string messages = R"("messages": [{"role": "user", "content": "x"}])";
  auto chat =
      Parse(StrCat(R"({"model": "m", )", messages, R"(, "logprobs": true, "top_logprobs": 5})"),
            GenerationApi::kChat);
  ASSERT_TRUE(chat.ok()) << chat.status();
  EXPECT_EQ(chat->request->logprobs, 5);
  EXPECT_TRUE(chat->call.logprobs);
  auto plain =
      Parse(StrCat(R"({"model": "m", )", messages, R"(, "logprobs": true})"), GenerationApi::kChat);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->request->logprobs, 0);
  auto none = Parse(StrCat(R"({"model": "m", )", messages, R"(, "logprobs": false})"),
                    GenerationApi::kChat);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->request->logprobs, -1);
  EXPECT_FALSE(none->call.logprobs);
  EXPECT_THAT(ErrorOf(Parse(StrCat(R"({"model": "m", )", messages, R"(, "top_logprobs": 2})"),
                            GenerationApi::kChat)),
              HasSubstr("'top_logprobs' needs 'logprobs': true"));
  EXPECT_THAT(ErrorOf(Parse(StrCat(R"({"model": "m", )", messages,
                                   R"(, "logprobs": true, "top_logprobs": 21})"),
                            GenerationApi::kChat)),
              HasSubstr("'top_logprobs' must be in 0..20"));
  auto completion =
      Parse(R"({"model": "m", "prompt": "p", "logprobs": 3})", GenerationApi::kCompletion);
  ASSERT_TRUE(completion.ok()) << completion.status();
  EXPECT_EQ(completion->request->logprobs, 3);
  EXPECT_THAT(ErrorOf(Parse(R"({"model": "m", "prompt": "p", "logprobs": true})",
                            GenerationApi::kCompletion)),
              HasSubstr("'logprobs' must be an integer"));
}

TEST_F(GenerationCodecTest, WritesChatAndCompletionLogprobs) {
  GenerationCall call;
  call.api = GenerationApi::kChat;
  call.model = "m";
  call.logprobs = true;
  GenerationChoice choice;
  choice.text = "Hi!";
  choice.done.done = true;
  choice.logprobs = {{"Hi", -0.25f, {{"Hi", -0.25f}, {"Hello", -1.5f}}}, {"!", -0.5f, {}}};
  HttpReply reply = EncodeGenerationReply(call, std::span(&choice, 1));
  rapidjson::Document d;
  d.Parse(reply.body.c_str());
  ASSERT_FALSE(d.HasParseError()) << reply.body;
  const auto& content = d["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.Size(), 2u);
  EXPECT_STREQ(content[0]["token"].GetString(), "Hi");
  EXPECT_DOUBLE_EQ(content[0]["logprob"].GetDouble(), -0.25);
  EXPECT_EQ(content[0]["bytes"].Size(), 2u);
  EXPECT_EQ(content[0]["bytes"][0].GetInt(), 'H');
  EXPECT_STREQ(content[0]["top_logprobs"][1]["token"].GetString(), "Hello");

  call.api = GenerationApi::kCompletion;
  reply = EncodeGenerationReply(call, std::span(&choice, 1));
  d.Parse(reply.body.c_str());
  ASSERT_FALSE(d.HasParseError()) << reply.body;
  const auto& legacy = d["choices"][0]["logprobs"];
  EXPECT_STREQ(legacy["tokens"][1].GetString(), "!");
  EXPECT_DOUBLE_EQ(legacy["token_logprobs"][1].GetDouble(), -0.5);
  EXPECT_DOUBLE_EQ(legacy["top_logprobs"][0]["Hello"].GetDouble(), -1.5);
  EXPECT_EQ(legacy["text_offset"][1].GetInt(), 2);

  call.logprobs = false;
  reply = EncodeGenerationReply(call, std::span(&choice, 1));
  d.Parse(reply.body.c_str());
  EXPECT_TRUE(d["choices"][0]["logprobs"].IsNull());
}

}  // namespace
}  // namespace inferd

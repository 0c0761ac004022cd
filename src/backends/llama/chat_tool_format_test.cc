#include "backends/llama/chat_tool_format.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <llama.h>
#include <nlohmann/json.hpp>

#include "backends/llama/llama_log.h"

namespace inferd {
namespace {

// Qwen2.5's own template (Hermes-style <tool_call> JSON), as llama.cpp ships it.
std::string QwenTemplate() {
  std::ifstream file(INFERD_LLAMA_MODELS_DIR "/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// SmolLM2's (the demo model's): ChatML that knows no tools.
constexpr char kSmolTemplate[] =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}";

constexpr char kWeatherSchema[] =
    R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})";

constexpr char kWeatherCall[] =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

ChatToolRequest WeatherTools(ChatToolChoice choice, std::string named = "") {
  ChatToolRequest tools;
  tools.tools.push_back(ChatTool{"get_weather", "The weather in a city", kWeatherSchema});
  tools.tools.push_back(
      ChatTool{"get_time", "The time in a city",
               R"({"type":"object","properties":{"zone":{"type":"string"}},"required":["zone"]})"});
  tools.choice = choice;
  tools.named = std::move(named);
  return tools;
}

class ChatToolFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string source = QwenTemplate();
    ASSERT_FALSE(source.empty()) << "Qwen2.5's template is missing: run scripts/setup-llama-source";
    auto format = ChatToolFormat::FromTemplate(source, "", "<|im_end|>");
    ASSERT_TRUE(format.ok()) << format.status();
    qwen_ = *std::move(format);
  }

  std::unique_ptr<ChatToolFormat> qwen_;
};

TEST_F(ChatToolFormatTest, AToolAwareTemplateKnowsTools) { EXPECT_TRUE(qwen_->knows_tools()); }

TEST(ChatToolFormatDetectionTest, ATemplateWithoutToolsKeepsTheGenericFormat) {
  auto format = ChatToolFormat::FromTemplate(kSmolTemplate, "", "<|im_end|>");
  ASSERT_TRUE(format.ok()) << format.status();
  EXPECT_FALSE((*format)->knows_tools());
}

TEST(ChatToolFormatDetectionTest, ATemplateThatIsNotJinjaIsRefused) {
  auto format = ChatToolFormat::FromTemplate("{% for %}", "", "");
  EXPECT_EQ(format.status().code(), absl::StatusCode::kInvalidArgument) << format.status();
  EXPECT_EQ(ChatToolFormat::FromTemplate("", "", "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ChatToolFormatTest, RendersTheToolsInTheTemplatesOwnSection) {
  auto prompt = qwen_->Apply({{"user", "Weather in Paris?"}}, WeatherTools(ChatToolChoice::kAuto));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_NE(prompt->prompt.find("# Tools"), std::string::npos) << prompt->prompt;
  EXPECT_NE(prompt->prompt.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": "
                                "\"get_weather\""),
            std::string::npos)
      << prompt->prompt;
  EXPECT_NE(prompt->prompt.find("get_time"), std::string::npos);
  EXPECT_TRUE(prompt->prompt.ends_with("<|im_start|>assistant\n")) << prompt->prompt;
}

TEST_F(ChatToolFormatTest, AutoHoldsTheReplyOnlyFromTheCallMarkerOn) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kAuto));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_FALSE(prompt->grammar.empty());
  EXPECT_TRUE(prompt->grammar_lazy);
  ASSERT_EQ(prompt->trigger_patterns.size(), 1u);
  EXPECT_EQ(prompt->trigger_patterns[0], "<tool_call>\n");
}

TEST_F(ChatToolFormatTest, RequiredHoldsTheReplyFromItsFirstToken) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kRequired));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_FALSE(prompt->grammar.empty());
  EXPECT_FALSE(prompt->grammar_lazy);
  EXPECT_TRUE(prompt->trigger_patterns.empty());
  EXPECT_NE(prompt->grammar.find("tool_call"), std::string::npos) << prompt->grammar;
}

TEST_F(ChatToolFormatTest, ANamedFunctionIsTheOnlyToolTheTemplateShows) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kNamed, "get_time"));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_NE(prompt->prompt.find("get_time"), std::string::npos);
  EXPECT_EQ(prompt->prompt.find("get_weather"), std::string::npos);
  EXPECT_FALSE(prompt->grammar_lazy);
  EXPECT_EQ(prompt->grammar.find("get_weather"), std::string::npos);
}

TEST_F(ChatToolFormatTest, ParsesATemplatesCallIntoNameAndArguments) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kRequired));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  ChatToolReply reply = ChatToolFormat::Parse(
      *prompt,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>",
      "call_");
  ASSERT_EQ(reply.calls.size(), 1u) << reply.content;
  EXPECT_EQ(reply.calls[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(reply.calls[0].arguments), nlohmann::json({{"city", "Paris"}}));
  EXPECT_TRUE(reply.calls[0].id.starts_with("call_")) << reply.calls[0].id;
  EXPECT_EQ(reply.content, "");
}

TEST_F(ChatToolFormatTest, ParsesParallelCallsEachWithItsOwnId) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kAuto));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  ChatToolReply reply = ChatToolFormat::Parse(
      *prompt,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"CET\"}}\n"
      "</tool_call>",
      "call_");
  ASSERT_EQ(reply.calls.size(), 2u) << reply.content;
  EXPECT_EQ(reply.calls[0].name, "get_weather");
  EXPECT_EQ(reply.calls[1].name, "get_time");
  EXPECT_EQ(nlohmann::json::parse(reply.calls[1].arguments), nlohmann::json({{"zone", "CET"}}));
  EXPECT_NE(reply.calls[0].id, reply.calls[1].id);
}

TEST_F(ChatToolFormatTest, ProseUnderAutoIsContent) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kAuto));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  ChatToolReply reply = ChatToolFormat::Parse(*prompt, "It is sunny.", "call_");
  EXPECT_TRUE(reply.calls.empty());
  EXPECT_EQ(reply.content, "It is sunny.");
}

TEST_F(ChatToolFormatTest, ACallCutShortComesBackAsText) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kRequired));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  const std::string cut = "<tool_call>\n{\"name\": \"get_weather\", \"argu";
  ChatToolReply reply = ChatToolFormat::Parse(*prompt, cut, "call_");
  EXPECT_TRUE(reply.calls.empty());
  EXPECT_EQ(reply.content, cut);
}

TEST_F(ChatToolFormatTest, RendersHistoryCallsAndResultsTheTemplatesWay) {
  std::vector<ChatTurn> history;
  history.push_back(ChatTurn{"user", "Weather in Paris?"});
  ChatTurn call{"assistant", ""};
  call.tool_calls.push_back(ChatToolCall{"call_1", "get_weather", R"({"city":"Paris"})"});
  history.push_back(call);
  ChatTurn result{"tool", "18 C"};
  result.tool_call_id = "call_1";
  result.tool_name = "get_weather";
  history.push_back(result);
  auto prompt = qwen_->Apply(history, WeatherTools(ChatToolChoice::kAuto));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_NE(prompt->prompt.find("<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", "
                                "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>"),
            std::string::npos)
      << prompt->prompt;
  EXPECT_NE(prompt->prompt.find("<|im_start|>user\n<tool_response>\n18 C\n</tool_response>"),
            std::string::npos)
      << prompt->prompt;
}

TEST_F(ChatToolFormatTest, ATemplatesRaisedErrorIsInvalidArgument) {
  auto format = ChatToolFormat::FromTemplate(
      "{% if messages[0]['role'] == 'tool' %}{{ raise_exception('no tool first') }}{% endif %}"
      "{% for m in messages %}{{ m['content'] }}{% endfor %}",
      "", "");
  ASSERT_TRUE(format.ok()) << format.status();
  EXPECT_FALSE((*format)->knows_tools());
  auto prompt = (*format)->Apply({{"tool", "x"}}, ChatToolRequest{});
  EXPECT_EQ(prompt.status().code(), absl::StatusCode::kInvalidArgument) << prompt.status();
}

// With a real vocabulary (llama.cpp's vocabulary-only Qwen2 GGUF: its tokens, its ChatML
// template without tools), what the engine does with a prompt's grammar.
class ChatToolGrammarTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    InitLlamaOnce();
    llama_model_params params = llama_model_default_params();
    params.vocab_only = true;
    model_ = llama_model_load_from_file(INFERD_LLAMA_MODELS_DIR "/ggml-vocab-qwen2.gguf", params);
  }
  static void TearDownTestSuite() {
    llama_model_free(model_);
    model_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(model_, nullptr) << "the Qwen2 vocabulary is missing: run scripts/setup-llama-source";
    auto format = ChatToolFormat::FromTemplate(QwenTemplate(), "", "<|im_end|>");
    ASSERT_TRUE(format.ok()) << format.status();
    qwen_ = *std::move(format);
  }

  const llama_vocab* vocab() const { return llama_model_get_vocab(model_); }

  std::vector<llama_token> Tokenize(const std::string& text) const {
    std::vector<llama_token> tokens(text.size() + 2);
    const int32_t n =
        llama_tokenize(vocab(), text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                       static_cast<int32_t>(tokens.size()), false, true);
    tokens.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return tokens;
  }

  // Whether `grammar` lets `token` come next.
  static bool Allows(llama_sampler* grammar, llama_token token) {
    llama_token_data data{token, 0.0f, 0.0f};
    llama_token_data_array candidates{&data, 1, -1, false};
    llama_sampler_apply(grammar, &candidates);
    return std::isfinite(data.logit);
  }

  static llama_model* model_;
  std::unique_ptr<ChatToolFormat> qwen_;
};

llama_model* ChatToolGrammarTest::model_ = nullptr;

TEST_F(ChatToolGrammarTest, AModelWhoseTemplateKnowsNoToolsKeepsTheGenericFormat) {
  auto format = ChatToolFormat::FromModel(model_);
  ASSERT_TRUE(format.ok()) << format.status();
  EXPECT_FALSE((*format)->knows_tools());
}

// llama.cpp's grammar for a required call lets text come before the call, but not the end of
// the reply before a whole call, nor a call of a function the request does not offer.
TEST_F(ChatToolGrammarTest, ARequiredCallIsHeldToTheTemplatesSyntax) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kNamed, "get_weather"));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  auto compiled = CompileToolGrammar(vocab(), *prompt, "tools");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_NE(*compiled, nullptr);
  const llama_token end = llama_vocab_eos(vocab());

  llama_sampler* grammar = llama_sampler_clone(compiled->get());
  // The grammar starts with the turn's opening, which it was fed: the call's first token fits.
  EXPECT_FALSE(Allows(grammar, end));
  for (llama_token token : Tokenize(kWeatherCall)) {
    ASSERT_TRUE(Allows(grammar, token)) << "token " << token;
    llama_sampler_accept(grammar, token);
  }
  EXPECT_TRUE(Allows(grammar, end));
  llama_sampler_free(grammar);

  grammar = llama_sampler_clone(compiled->get());
  bool refused = false;
  for (llama_token token : Tokenize("<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}")) {
    if (!Allows(grammar, token)) {
      refused = true;
      break;
    }
    llama_sampler_accept(grammar, token);
  }
  EXPECT_TRUE(refused) << "a call of get_time, which the named choice does not allow";
  llama_sampler_free(grammar);
}

TEST_F(ChatToolGrammarTest, AForcedCallStartsAtOnceWithNoProseBeforeIt) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kRequired));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  auto compiled = CompileToolGrammar(vocab(), *prompt, "tools");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  llama_sampler* grammar = llama_sampler_clone(compiled->get());
  EXPECT_FALSE(Allows(grammar, Tokenize("The")[0]));
  EXPECT_TRUE(Allows(grammar, Tokenize("<tool_call>")[0]));
  llama_sampler_free(grammar);
}

TEST_F(ChatToolGrammarTest, AnAutoReplyIsFreeUntilTheCallMarker) {
  auto prompt = qwen_->Apply({{"user", "Hi"}}, WeatherTools(ChatToolChoice::kAuto));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  auto compiled = CompileToolGrammar(vocab(), *prompt, "tools");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_NE(*compiled, nullptr);
  llama_sampler* grammar = llama_sampler_clone(compiled->get());
  EXPECT_TRUE(Allows(grammar, Tokenize("Hello")[0]));
  llama_sampler_free(grammar);
}

TEST_F(ChatToolGrammarTest, AGrammarLlamaCppCannotCompileIsInvalidArgumentNamingTheField) {
  ChatToolPrompt prompt;
  prompt.grammar = "root ::= (";
  auto compiled = CompileToolGrammar(vocab(), prompt, "tools");
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(compiled.status().message().find("'tools'"), std::string::npos) << compiled.status();
  prompt.grammar.clear();
  auto none = CompileToolGrammar(vocab(), prompt, "tools");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
}

}  // namespace
}  // namespace inferd

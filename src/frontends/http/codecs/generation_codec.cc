// The generation codec's request side (generation_codec.h): OpenAI's chat completions and
// completions bodies and KServe's generate body, read into a GenerateRequest, every field
// known and bounded. The chat messages are read in generation_chat_messages.cc, the replies
// written in generation_reply.cc and generation_stream.cc.
#include "frontends/http/codecs/generation_codec.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <span>

#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/backend/infer_request.h"
#include "frontends/http/codecs/generation_codec_tools.h"
#include "frontends/http/codecs/lora_field.h"
#include "frontends/http/codecs/request_fields.h"

namespace inferd {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// The sampling fields every API shares (OpenAI's body, KServe's parameters).
constexpr std::string_view kSamplingFields[] = {"temperature",
                                                "top_p",
                                                "top_k",
                                                "min_p",
                                                "seed",
                                                "stop",
                                                "cache_prompt",
                                                "presence_penalty",
                                                "frequency_penalty",
                                                "repetition_penalty",
                                                "repeat_last_n",
                                                "logit_bias"};

// OpenAI fields inferd does not implement, accepted only at the value that asks for nothing
// (so a client library that always sends its defaults works), refused otherwise: a
// parameter accepted and then ignored gives an application plausible output that is wrong
// far from the cause (JSON mode answered with prose).
bool IsNeutral(std::string_view key, element value) {
  if (value.is_null()) return true;
  bool flag = false;
  int64_t number = 0;
  std::string_view text;
  array list;
  if (key == "echo") return !value.get(flag) && !flag;
  if (key == "best_of") return !value.get(number) && number == 1;
  if (key == "suffix") return !value.get(text) && text.empty();
  if (key == "tools") return !value.get(list) && list.size() == 0;
  if (key == "tool_choice") return !value.get(text) && (text == "none" || text == "auto");
  if (key == "parallel_tool_calls") return !value.get(flag);
  if (key == "store") return !value.get(flag) && !flag;
  return false;
}

// Every field of `o` must be one of `known`, or of kSamplingFields when `sampling`, or a
// neutral OpenAI default (IsNeutral); InvalidArgument naming the first that is not.
absl::Status CheckFields(object o, std::span<const std::string_view> known, std::string_view where,
                         bool sampling = true) {
  for (auto [key, value] : o) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (sampling && std::find(std::begin(kSamplingFields), std::end(kSamplingFields), key) !=
                        std::end(kSamplingFields)) {
      continue;
    }
    if (IsNeutral(key, value)) continue;
    return InvalidField(key, StrCat("'", key, "'", where,
                                    " is not supported by this server (docs/llm.md lists what is); "
                                    "remove it rather than have it ignored"));
  }
  return absl::OkStatus();
}

// OpenAI's logit_bias: {"token id": bias}, ids as strings, bias in [-100, 100].
absl::Status ReadLogitBias(object o, std::vector<TokenBias>* out) {
  element value;
  if (o["logit_bias"].get(value) || value.is_null()) return absl::OkStatus();
  object biases;
  if (value.get(biases)) {
    return InvalidField("logit_bias", "'logit_bias' must be an object of token id: bias");
  }
  if (biases.size() > kMaxLogitBias) {
    return InvalidField("logit_bias", StrCat("'logit_bias' may name at most ", kMaxLogitBias,
                                             " tokens, got ", biases.size()));
  }
  for (auto [key, bias] : biases) {
    int64_t token = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), token);
    if (ec != std::errc() || end != key.data() + key.size() || token < 0 || token > INT32_MAX) {
      return InvalidField("logit_bias",
                          StrCat("'logit_bias' keys are token ids (integers), got '", key, "'"));
    }
    double number = 0;
    if (bias.get(number) || !(number >= -100 && number <= 100)) {
      return InvalidField(
          "logit_bias",
          StrCat("'logit_bias' values must be numbers in [-100, 100] (token ", key, ")"));
    }
    out->push_back({static_cast<int32_t>(token), static_cast<float>(number)});
  }
  return absl::OkStatus();
}

// The sampling fields and limits both OpenAI APIs and KServe's parameters share.
absl::Status ReadSampling(object o, GenerateRequest& request) {
  RETURN_IF_ERROR(ReadNumber(o, "temperature", 0, 2, &request.sampling.temperature));
  RETURN_IF_ERROR(ReadNumber(o, "top_p", 0, 1, &request.sampling.top_p));
  if (request.sampling.top_p <= 0) return InvalidField("top_p", "'top_p' must be in (0, 1]");
  int64_t top_k = request.sampling.top_k;
  RETURN_IF_ERROR(ReadInteger(o, "top_k", 0, 1 << 20, &top_k));
  request.sampling.top_k = static_cast<int>(top_k);
  RETURN_IF_ERROR(ReadNumber(o, "min_p", 0, 1, &request.sampling.min_p));
  RETURN_IF_ERROR(ReadNumber(o, "presence_penalty", -2, 2, &request.sampling.presence_penalty));
  RETURN_IF_ERROR(ReadNumber(o, "frequency_penalty", -2, 2, &request.sampling.frequency_penalty));
  RETURN_IF_ERROR(
      ReadNumber(o, "repetition_penalty", 0.01, 10, &request.sampling.repetition_penalty));
  int64_t last_n = request.sampling.penalty_last_n;
  RETURN_IF_ERROR(ReadInteger(o, "repeat_last_n", 0, 1 << 16, &last_n));
  request.sampling.penalty_last_n = static_cast<int>(last_n);
  RETURN_IF_ERROR(ReadLogitBias(o, &request.sampling.logit_bias));
  int64_t seed = 0;
  bool has_seed = false;
  RETURN_IF_ERROR(ReadInteger(o, "seed", INT64_MIN, INT64_MAX, &seed, &has_seed));
  if (has_seed) request.sampling.seed = static_cast<uint32_t>(seed);
  RETURN_IF_ERROR(ReadStops(o, "stop", &request.stop));
  // An extension (llama.cpp's server has it too): false processes the whole prompt.
  RETURN_IF_ERROR(ReadBool(o, "cache_prompt", &request.cache_prompt));
  return absl::OkStatus();
}

// OpenAI's response_format ({"type": "text" | "json_object" | "json_schema"}) and llama.cpp
// server's `grammar` (GBNF text): what the output must be. Only read here; the model checks
// the schema or grammar and compiles it, off this thread.
absl::Status ReadOutputFormat(object o, OutputFormat* out) {
  element grammar;
  if (!o["grammar"].get(grammar) && !grammar.is_null()) {
    std::string_view text;
    if (grammar.get(text))
      return InvalidField("grammar", "'grammar' must be a string (a GBNF grammar)");
    // An empty grammar asks for nothing (as llama.cpp's server takes it).
    if (!text.empty()) {
      out->kind = OutputFormat::Kind::kGrammar;
      out->text = std::string(text);
    }
  }
  element value;
  if (o["response_format"].get(value) || value.is_null()) return absl::OkStatus();
  object format;
  std::string_view type;
  if (value.get(format) || format["type"].get(type)) {
    return InvalidField(
        "response_format",
        "'response_format' must be an object with a 'type': text, json_object or json_schema");
  }
  if (type == "text" || type == "json_object") {
    static constexpr std::string_view kFields[] = {"type"};
    RETURN_IF_ERROR(CheckFields(format, kFields, " in 'response_format'", /*sampling=*/false));
  } else if (type == "json_schema") {
    static constexpr std::string_view kFields[] = {"type", "json_schema"};
    RETURN_IF_ERROR(CheckFields(format, kFields, " in 'response_format'", /*sampling=*/false));
  } else {
    return InvalidField("response_format",
                        StrCat("'response_format' type '", type,
                               "' is not supported (text, json_object and json_schema are)"));
  }
  if (type != "text" && out->kind == OutputFormat::Kind::kGrammar) {
    return InvalidField("grammar", "give 'response_format' or 'grammar', not both");
  }
  if (type == "text") return absl::OkStatus();
  if (type == "json_object") {
    out->kind = OutputFormat::Kind::kJsonObject;
    return absl::OkStatus();
  }
  object json_schema;
  if (format["json_schema"].get(json_schema)) {
    return InvalidField("response_format.json_schema",
                        "'response_format.json_schema' is required with type json_schema: "
                        "{\"name\": ..., \"schema\": {...}}");
  }
  // Every schema is enforced exactly: "strict" may say so, or not.
  static constexpr std::string_view kSchemaFields[] = {"name", "description", "schema", "strict"};
  RETURN_IF_ERROR(CheckFields(json_schema, kSchemaFields, " in 'response_format.json_schema'",
                              /*sampling=*/false));
  std::string_view name;
  element field;
  if (!json_schema["name"].get(field) && field.get(name)) {
    return InvalidField("response_format.json_schema.name",
                        "'response_format.json_schema.name' must be a string");
  }
  bool strict = true;
  if (!json_schema["strict"].get(field) && !field.is_null() && field.get(strict)) {
    return InvalidField("response_format.json_schema.strict",
                        "'response_format.json_schema.strict' must be true or false");
  }
  element schema;
  if (json_schema["schema"].get(schema) || !schema.is_object()) {
    return InvalidField("response_format.json_schema.schema",
                        "'response_format.json_schema.schema' is required: a JSON schema object");
  }
  out->kind = OutputFormat::Kind::kJsonSchema;
  out->text = simdjson::minify(schema);
  return absl::OkStatus();
}

// OpenAI's logprobs: chat takes `logprobs: true` and `top_logprobs: 0..20` (which needs
// logprobs); completions take `logprobs: 0..20`, the alternatives per token. -1: none.
absl::Status ReadLogprobs(object o, GenerationApi api, int* out) {
  if (api == GenerationApi::kCompletion) {
    int64_t top = -1;
    RETURN_IF_ERROR(ReadInteger(o, "logprobs", 0, kMaxTopLogprobs, &top));
    *out = static_cast<int>(top);
    return absl::OkStatus();
  }
  bool wanted = false;
  RETURN_IF_ERROR(ReadBool(o, "logprobs", &wanted));
  int64_t top = 0;
  bool top_present = false;
  RETURN_IF_ERROR(ReadInteger(o, "top_logprobs", 0, kMaxTopLogprobs, &top, &top_present));
  if (top_present && !wanted) {
    return InvalidField("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  }
  *out = wanted ? static_cast<int>(top) : -1;
  return absl::OkStatus();
}

absl::Status ReadMaxTokens(object o, std::string_view key, GenerateRequest& request) {
  return ReadInteger(o, key, 1, 1 << 24, &request.max_tokens);
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::Status CheckPromptBytes(size_t bytes, std::string_view field) {
  if (bytes <= kMaxPromptBytes) return absl::OkStatus();
  // More than any model's context holds.
  return WithErrorReason(
      InvalidField(field, StrCat("the prompt has ", bytes, " bytes; the server takes at most ",
                                 kMaxPromptBytes, " bytes of prompt text")),
      ErrorReason::kContextLengthExceeded);
}

absl::StatusOr<ParsedGeneration> ParseOpenAiRequest(element body, GenerationApi api) {
  object o;
  if (body.get(o)) return Invalid("the request body must be a JSON object");
  ParsedGeneration parsed;
  parsed.call.api = api;
  parsed.call.created = NowSeconds();
  parsed.request = std::make_unique<GenerateRequest>();
  GenerateRequest& request = *parsed.request;
  std::string_view model;
  if (o["model"].get(model) || model.empty()) {
    return InvalidField(
        "model", "'model' is required: the name of a model this server serves (GET /v1/models)");
  }
  parsed.call.model = std::string(model);
  static constexpr std::string_view kChatFields[] = {"model",
                                                     "messages",
                                                     "n",
                                                     "stream",
                                                     "stream_options",
                                                     "max_tokens",
                                                     "max_completion_tokens",
                                                     "response_format",
                                                     "grammar",
                                                     "logprobs",
                                                     "top_logprobs",
                                                     "tools",
                                                     "tool_choice",
                                                     "parallel_tool_calls",
                                                     "lora"};
  static constexpr std::string_view kCompletionFields[] = {
      "model",      "prompt",          "n",       "stream",   "stream_options",
      "max_tokens", "response_format", "grammar", "logprobs", "lora"};
  if (api == GenerationApi::kChat) {
    RETURN_IF_ERROR(CheckFields(o, kChatFields, ""));
  } else {
    RETURN_IF_ERROR(CheckFields(o, kCompletionFields, ""));
  }
  int64_t n = 1;
  RETURN_IF_ERROR(ReadInteger(o, "n", 1, kMaxChoices, &n));
  parsed.call.n = static_cast<int>(n);
  RETURN_IF_ERROR(ReadBool(o, "stream", &parsed.call.stream));
  object stream_options;
  if (!o["stream_options"].get(stream_options)) {
    static constexpr std::string_view kStreamOptions[] = {"include_usage"};
    RETURN_IF_ERROR(CheckFields(stream_options, kStreamOptions, " in 'stream_options'"));
    RETURN_IF_ERROR(ReadBool(stream_options, "include_usage", &parsed.call.include_usage));
  }
  RETURN_IF_ERROR(ReadSampling(o, request));
  RETURN_IF_ERROR(ReadOutputFormat(o, &request.output_format));
  RETURN_IF_ERROR(ReadLogprobs(o, api, &request.logprobs));
  RETURN_IF_ERROR(ReadLoraField(o, &request.adapters));
  parsed.call.logprobs = request.logprobs >= 0;
  if (api == GenerationApi::kChat) {
    RETURN_IF_ERROR(ReadMaxTokens(o, "max_tokens", request));
    RETURN_IF_ERROR(ReadMaxTokens(o, "max_completion_tokens", request));
    std::vector<ToolTurn> turns;
    ASSIGN_OR_RETURN(request.messages, ParseChatMessages(o, &turns));
    request.chat = true;
    ASSIGN_OR_RETURN(ToolSet tools, ReadOpenAiTools(o));
    if (tools.active()) {
      if (parsed.call.logprobs) {
        return InvalidField("logprobs",
                            "'logprobs' cannot be combined with 'tools' (the tokens "
                            "would be the tool format's JSON)");
      }
      RETURN_IF_ERROR(ApplyTools(tools, request));
      request.tools = ModelToolsOf(tools, std::move(turns), "call_");
      parsed.call.tools = std::make_shared<const ToolSet>(std::move(tools));
    }
    parsed.call.id = "chatcmpl-";
  } else {
    // OpenAI's default for completions.
    request.max_tokens = 16;
    RETURN_IF_ERROR(ReadMaxTokens(o, "max_tokens", request));
    element prompt;
    if (o["prompt"].get(prompt)) return InvalidField("prompt", "'prompt' is required");
    std::string_view text;
    array list;
    if (!prompt.get(list)) {
      if (list.size() != 1 || list.at(0).get(text)) {
        return InvalidField("prompt",
                            "'prompt' must be a string (or a list of exactly one string)");
      }
    } else if (prompt.get(text)) {
      return InvalidField("prompt", "'prompt' must be a string");
    }
    RETURN_IF_ERROR(CheckPromptBytes(text.size(), "prompt"));
    request.prompt = std::string(text);
    parsed.call.id = "cmpl-";
  }
  return parsed;
}

absl::StatusOr<ParsedGeneration> ParseKServeGenerate(element body, bool stream) {
  object o;
  if (body.get(o)) return Invalid("the request body must be a JSON object");
  ParsedGeneration parsed;
  parsed.call.api = GenerationApi::kKServe;
  parsed.call.stream = stream;
  parsed.request = std::make_unique<GenerateRequest>();
  GenerateRequest& request = *parsed.request;
  std::string_view text;
  if (o["text_input"].get(text)) return Invalid("'text_input' is required: the prompt, a string");
  RETURN_IF_ERROR(CheckPromptBytes(text.size(), "text_input"));
  request.prompt = std::string(text);
  std::string_view id;
  if (!o["id"].get(id)) {
    // Echoed into every event of a stream: bounded (core/backend/infer_request.h).
    if (id.size() > kMaxClientIdBytes) {
      return Invalid(
          StrCat("'id' is ", id.size(), " bytes; at most ", kMaxClientIdBytes, " are allowed"));
    }
    parsed.call.id = std::string(id);
    request.id = parsed.call.id;
  }
  object parameters;
  // The parameters stand in "parameters", or at the top level (as Triton's clients send them),
  // not both: a field in the other place would be ignored.
  static constexpr std::string_view kFlatFields[] = {"text_input", "id", "max_tokens", "stream"};
  static constexpr std::string_view kNestedFields[] = {"text_input", "id", "parameters"};
  static constexpr std::string_view kParameterFields[] = {"max_tokens", "stream"};
  if (o["parameters"].get(parameters)) {
    RETURN_IF_ERROR(CheckFields(o, kFlatFields, ""));
    parameters = o;
  } else {
    RETURN_IF_ERROR(CheckFields(o, kNestedFields, "", /*sampling=*/false));
    RETURN_IF_ERROR(CheckFields(parameters, kParameterFields, " in 'parameters'"));
  }
  // "stream" is the endpoint's (generate or generate_stream); a body that says otherwise is
  // refused rather than ignored.
  bool stream_asked = stream;
  RETURN_IF_ERROR(ReadBool(parameters, "stream", &stream_asked));
  if (stream_asked != stream) {
    return Invalid(StrCat("'stream' is ", stream_asked ? "true" : "false", ", but ",
                          stream ? "generate_stream always streams"
                                 : "generate never streams (use generate_stream)"));
  }
  RETURN_IF_ERROR(ReadSampling(parameters, request));
  RETURN_IF_ERROR(ReadMaxTokens(parameters, "max_tokens", request));
  return parsed;
}

}  // namespace inferd

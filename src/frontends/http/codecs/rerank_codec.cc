#include "frontends/http/codecs/rerank_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "frontends/http/codecs/generation_codec.h"

namespace inferd {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// InvalidArgument naming `field` (common/error_detail.h): OpenAI's "param".
absl::Status InvalidField(std::string_view field, const std::string& message) {
  return WithErrorField(absl::InvalidArgumentError(message), field);
}

}  // namespace

absl::StatusOr<ParsedRerank> ParseRerankRequest(element body) {
  object o;
  if (body.get(o)) return absl::InvalidArgumentError("the request body must be a JSON object");
  for (auto field : o) {
    const std::string_view key = field.key;
    if (key != "model" && key != "query" && key != "documents" && key != "top_n" &&
        key != "return_documents") {
      return InvalidField(key, StrCat("'", key,
                                      "' is not supported (known: model, query, documents, "
                                      "top_n, return_documents)"));
    }
  }
  ParsedRerank parsed;
  std::string_view model;
  if (o["model"].get(model) || model.empty()) {
    return InvalidField(
        "model", "'model' is required: the name of a reranker this server serves (GET /v1/models)");
  }
  parsed.model = std::string(model);
  parsed.request = std::make_unique<RerankRequest>();
  std::string_view query;
  if (o["query"].get(query)) return InvalidField("query", "'query' is required: a string");
  if (query.empty()) return InvalidField("query", "'query' is empty");
  size_t bytes = query.size();
  RETURN_IF_ERROR(CheckPromptBytes(bytes, "query"));
  parsed.request->query = std::string(query);
  array documents;
  if (o["documents"].get(documents)) {
    return InvalidField("documents", "'documents' is required: a list of strings");
  }
  if (documents.size() == 0 || documents.size() > kMaxRerankDocuments) {
    return InvalidField("documents", StrCat("'documents' must hold 1 to ", kMaxRerankDocuments,
                                            " texts, got ", documents.size()));
  }
  size_t index = 0;
  for (element item : documents) {
    std::string_view text;
    if (item.get(text)) {
      return InvalidField("documents", StrCat("documents[", index,
                                              "] must be a string (objects with fields are "
                                              "not supported)"));
    }
    if (text.empty()) return InvalidField("documents", StrCat("documents[", index, "] is empty"));
    bytes += text.size();
    RETURN_IF_ERROR(CheckPromptBytes(bytes, "documents"));
    parsed.request->documents.emplace_back(text);
    ++index;
  }
  element top_n;
  if (!o["top_n"].get(top_n) && !top_n.is_null()) {
    int64_t n = 0;
    if (top_n.get(n) || n < 1) return InvalidField("top_n", "'top_n' must be a positive integer");
    parsed.top_n = static_cast<size_t>(std::min<int64_t>(n, kMaxRerankDocuments));
  }
  element return_documents;
  if (!o["return_documents"].get(return_documents) && !return_documents.is_null()) {
    bool value = false;
    if (return_documents.get(value)) {
      return InvalidField("return_documents", "'return_documents' must be true or false");
    }
    parsed.return_documents = value;
  }
  return parsed;
}

HttpReply EncodeRerankReply(std::string_view model, size_t top_n,
                            const std::vector<std::string>& documents, const RerankResult& result) {
  const std::vector<float>& scores = result.scores;
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  // NaN (a broken model) sorts last rather than breaking the order's rules.
  auto key = [&scores](size_t i) { return std::isnan(scores[i]) ? -INFINITY : scores[i]; };
  std::stable_sort(order.begin(), order.end(),
                   [&key](size_t a, size_t b) { return key(a) > key(b); });
  if (top_n > 0 && top_n < order.size()) order.resize(top_n);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("model");
  w.String(model.data(), static_cast<rapidjson::SizeType>(model.size()));
  w.Key("object");
  w.String("list");
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Int64(result.prompt_tokens);
  w.Key("total_tokens");
  w.Int64(result.prompt_tokens);
  w.EndObject();
  w.Key("results");
  w.StartArray();
  for (size_t i : order) {
    w.StartObject();
    w.Key("index");
    w.Uint64(i);
    w.Key("relevance_score");
    if (std::isfinite(scores[i])) {
      // The shortest text that reads back as the same float.
      char text[32];
      auto [end, ec] = std::to_chars(text, text + sizeof(text), scores[i]);
      w.RawValue(text, static_cast<size_t>(end - text), rapidjson::kNumberType);
    } else {
      w.Null();
    }
    if (i < documents.size()) {
      w.Key("document");
      w.StartObject();
      w.Key("text");
      w.String(documents[i].data(), static_cast<rapidjson::SizeType>(documents[i].size()));
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  HttpReply reply;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

}  // namespace inferd

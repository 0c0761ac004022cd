#include "frontends/http/codecs/rerank_codec.h"

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "common/error_detail.h"

namespace inferd {
namespace {

class RerankCodecTest : public ::testing::Test {
 protected:
  absl::StatusOr<ParsedRerank> Parse(std::string json) {
    padded_ = simdjson::padded_string(json);
    simdjson::dom::element root;
    EXPECT_FALSE(parser_.parse(padded_).get(root));
    return ParseRerankRequest(root);
  }
  // "field: message" of a refusal; empty when parsed.
  std::string ErrorOf(std::string json) {
    absl::StatusOr<ParsedRerank> parsed = Parse(std::move(json));
    if (parsed.ok()) return "";
    return std::string(ErrorField(parsed.status())) + ": " + std::string(parsed.status().message());
  }

  simdjson::dom::parser parser_;
  simdjson::padded_string padded_;
};

TEST_F(RerankCodecTest, ReadsQueryDocumentsTopNAndReturnDocuments) {
  auto parsed = Parse(
      R"({"model": "m", "query": "q", "documents": ["a", "b"], "top_n": 1,
          "return_documents": true})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->model, "m");
  EXPECT_EQ(parsed->request->query, "q");
  EXPECT_EQ(parsed->request->documents, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(parsed->top_n, 1u);
  EXPECT_TRUE(parsed->return_documents);
  auto plain = Parse(R"({"model": "m", "query": "q", "documents": ["a"]})");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->top_n, 0u);
  EXPECT_FALSE(plain->return_documents);
}

TEST_F(RerankCodecTest, RefusalsNameTheField) {
  EXPECT_EQ(ErrorOf(R"({"query": "q", "documents": ["a"]})").rfind("model: ", 0), 0u);
  EXPECT_EQ(ErrorOf(R"({"model": "m", "documents": ["a"]})").rfind("query: ", 0), 0u);
  EXPECT_EQ(ErrorOf(R"({"model": "m", "query": "", "documents": ["a"]})").rfind("query: ", 0), 0u);
  EXPECT_EQ(ErrorOf(R"({"model": "m", "query": "q"})").rfind("documents: ", 0), 0u);
  EXPECT_EQ(ErrorOf(R"({"model": "m", "query": "q", "documents": []})").rfind("documents: ", 0),
            0u);
  EXPECT_EQ(ErrorOf(R"({"model": "m", "query": "q", "documents": [1]})").rfind("documents: ", 0),
            0u);
  EXPECT_EQ(
      ErrorOf(R"({"model": "m", "query": "q", "documents": ["a"], "top_n": -1})").rfind("top_n", 0),
      0u);
  EXPECT_EQ(ErrorOf(R"({"model": "m", "query": "q", "documents": ["a"], "return_documents": 1})")
                .rfind("return_documents: ", 0),
            0u);
  EXPECT_EQ(ErrorOf(R"({"model": "m", "query": "q", "documents": ["a"], "rank_fields": []})"),
            "rank_fields: 'rank_fields' is not supported (known: model, query, documents, top_n, "
            "return_documents)");
  std::string many = R"({"model": "m", "query": "q", "documents": [)";
  for (int i = 0; i < 513; ++i) many += i ? ",\"d\"" : "\"d\"";
  EXPECT_EQ(ErrorOf(many + "]}"), "documents: 'documents' must hold 1 to 512 texts, got 513");
}

TEST_F(RerankCodecTest, ReplyIsSortedByScoreAndCutToTopN) {
  RerankResult result;
  result.scores = {0.5f, 2.0f, -1.0f, 2.0f};
  result.prompt_tokens = 12;
  HttpReply reply = EncodeRerankReply("m", 3, {"a", "b", "c", "d"}, result);
  rapidjson::Document json;
  json.Parse(reply.body.c_str());
  ASSERT_FALSE(json.HasParseError()) << reply.body;
  EXPECT_STREQ(json["model"].GetString(), "m");
  EXPECT_STREQ(json["object"].GetString(), "list");
  EXPECT_EQ(json["usage"]["prompt_tokens"].GetInt(), 12);
  EXPECT_EQ(json["usage"]["total_tokens"].GetInt(), 12);
  const auto& results = json["results"];
  ASSERT_EQ(results.Size(), 3u);
  // Highest first; equal scores keep the documents' order.
  EXPECT_EQ(results[0]["index"].GetInt(), 1);
  EXPECT_EQ(results[1]["index"].GetInt(), 3);
  EXPECT_EQ(results[2]["index"].GetInt(), 0);
  EXPECT_DOUBLE_EQ(results[0]["relevance_score"].GetDouble(), 2.0);
  EXPECT_STREQ(results[2]["document"]["text"].GetString(), "a");
  HttpReply bare = EncodeRerankReply("m", 0, {}, result);
  json.Parse(bare.body.c_str());
  ASSERT_EQ(json["results"].Size(), 4u);
  EXPECT_FALSE(json["results"][0].HasMember("document"));
}

}  // namespace
}  // namespace inferd

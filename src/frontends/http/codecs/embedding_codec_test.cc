#include "frontends/http/codecs/embedding_codec.h"

#include <cstring>

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "absl/strings/escaping.h"

namespace inferd {
namespace {

class EmbeddingCodecTest : public ::testing::Test {
 protected:
  absl::StatusOr<ParsedEmbeddings> Parse(std::string json) {
    padded_ = simdjson::padded_string(json);
    simdjson::dom::element root;
    EXPECT_FALSE(parser_.parse(padded_).get(root));
    return ParseEmbeddingsRequest(root);
  }
  std::string ErrorOf(std::string json) {
    absl::StatusOr<ParsedEmbeddings> parsed = Parse(std::move(json));
    return parsed.ok() ? "" : std::string(parsed.status().message());
  }

  simdjson::dom::parser parser_;
  simdjson::padded_string padded_;
};

TEST_F(EmbeddingCodecTest, ReadsAStringOrAListOfStrings) {
  auto one = Parse(R"({"model": "m", "input": "hello"})");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->model, "m");
  EXPECT_EQ(one->request->inputs, std::vector<std::string>{"hello"});
  EXPECT_FALSE(one->base64);
  EXPECT_FALSE(one->request->dimensions.has_value());
  auto list = Parse(
      R"({"model": "m", "input": ["a", "b"], "encoding_format": "base64", "dimensions": 8,
          "user": "ignored"})");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->request->inputs, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(list->base64);
  EXPECT_EQ(list->request->dimensions, 8);
}

TEST_F(EmbeddingCodecTest, RefusesWhatItCannotOrWillNotEmbed) {
  EXPECT_NE(ErrorOf(R"({"input": "a"})").find("'model' is required"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model": "m"})").find("'input' is required"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model": "m", "input": []})").find("must not be empty"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model": "m", "input": ["a", ""]})").find("input[1] is empty"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model": "m", "input": [1, 2, 3]})").find("token ids"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model": "m", "input": [[1, 2]]})").find("token ids"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model": "m", "input": "a", "encoding_format": "int8"})")
                .find("\"float\" or \"base64\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model": "m", "input": "a", "dimensions": 0})").find("dimensions"),
            std::string::npos);
  std::string many = R"({"model": "m", "input": [)";
  for (size_t i = 0; i <= kMaxEmbeddingInputs; ++i) many += i == 0 ? "\"x\"" : ",\"x\"";
  many += "]}";
  EXPECT_NE(ErrorOf(many).find("at most 512 texts, got 513"), std::string::npos) << ErrorOf(many);
  const std::string big(600 * 1024, 'x');
  const std::string two = R"({"model": "m", "input": [")" + big + R"(", ")" + big + R"("]})";
  EXPECT_NE(ErrorOf(two).find("bytes of prompt text"), std::string::npos);
}

TEST_F(EmbeddingCodecTest, EncodesFloatsExactlyAndBase64AsLittleEndianFloat32) {
  EmbedResult result;
  result.embeddings = {{0.1f, -2.5f, 1e-7f}, {1.0f, 0.0f, 0.0f}};
  result.prompt_tokens = 5;
  HttpReply reply = EncodeEmbeddingsReply("m", false, result);
  rapidjson::Document doc;
  doc.Parse(reply.body.c_str());
  ASSERT_FALSE(doc.HasParseError()) << reply.body;
  EXPECT_STREQ(doc["object"].GetString(), "list");
  EXPECT_STREQ(doc["model"].GetString(), "m");
  EXPECT_EQ(doc["usage"]["prompt_tokens"].GetInt(), 5);
  EXPECT_EQ(doc["usage"]["total_tokens"].GetInt(), 5);
  ASSERT_EQ(doc["data"].Size(), 2u);
  EXPECT_EQ(doc["data"][1]["index"].GetInt(), 1);
  const auto& first = doc["data"][0]["embedding"];
  ASSERT_EQ(first.Size(), 3u);
  for (rapidjson::SizeType i = 0; i < 3; ++i) {
    EXPECT_EQ(static_cast<float>(first[i].GetDouble()), result.embeddings[0][i]);
  }
  EXPECT_NE(reply.body.find("[0.1,-2.5,1e-07]"), std::string::npos) << reply.body;

  HttpReply packed = EncodeEmbeddingsReply("m", true, result);
  doc.Parse(packed.body.c_str());
  ASSERT_FALSE(doc.HasParseError()) << packed.body;
  std::string bytes;
  ASSERT_TRUE(absl::Base64Unescape(doc["data"][0]["embedding"].GetString(), &bytes));
  ASSERT_EQ(bytes.size(), 3 * sizeof(float));
  float back[3];
  std::memcpy(back, bytes.data(), bytes.size());
  EXPECT_EQ(back[1], -2.5f);
  EXPECT_EQ(back[2], 1e-7f);
}

}  // namespace
}  // namespace inferd

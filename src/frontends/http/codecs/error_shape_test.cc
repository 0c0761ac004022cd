#include "frontends/http/codecs/error_shape.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace inferd {
namespace {

std::string ErrorType(const HttpReply& reply) {
  rapidjson::Document document;
  document.Parse(reply.body.c_str());
  EXPECT_TRUE(document.IsObject() && document.HasMember("error") && document["error"].IsObject())
      << reply.body;
  return document["error"]["type"].GetString();
}

TEST(ErrorShapeTest, ReshapesOnlyErrorsOfOpenAiPaths) {
  HttpReply refused = ErrorReply(413, "the request body is larger than the server's limit");
  refused.headers.emplace_back("Connection", "close");
  const HttpReply openai = InPathErrorShape("/v1/chat/completions", refused);
  EXPECT_EQ(openai.status, 413u);
  EXPECT_EQ(ErrorType(openai), "invalid_request_error");
  EXPECT_EQ(openai.headers, refused.headers);
  // KServe and TF-Serving keep {"error": "..."}.
  EXPECT_EQ(InPathErrorShape("/v2/models/m/infer", refused).body, refused.body);
  EXPECT_EQ(InPathErrorShape("/v1/models/m:predict", refused).body, refused.body);
  // A success is never touched.
  HttpReply ok;
  ok.body = "{}";
  EXPECT_EQ(InPathErrorShape("/v1/models", ok).body, "{}");
}

TEST(ErrorShapeTest, KnowsTheOpenAiPathsFromTfServings) {
  auto openai = [](std::string_view path) { return ErrorShapeOf(path) == ErrorShape::kOpenAi; };
  EXPECT_TRUE(openai("/v1/chat/completions"));
  EXPECT_TRUE(openai("/v1/completions"));
  EXPECT_TRUE(openai("/v1/embeddings"));
  EXPECT_TRUE(openai("/v1/models"));
  EXPECT_TRUE(openai("/v1/models/smollm2"));
  EXPECT_TRUE(openai("/v1/unknown"));
  EXPECT_FALSE(openai("/v1/models/m:predict"));
  EXPECT_FALSE(openai("/v1/models/m/versions/2:predict"));
  EXPECT_FALSE(openai("/v1/models/m/labels/stable:predict"));
  EXPECT_FALSE(openai("/v2/models/m/generate"));
  EXPECT_FALSE(openai("/v1x"));
  EXPECT_FALSE(openai("/predict"));
}

TEST(ErrorShapeTest, AnthropicsMessagesApiAnswersInAnthropicsShape) {
  EXPECT_EQ(ErrorShapeOf("/v1/messages"), ErrorShape::kAnthropic);
  EXPECT_EQ(ErrorShapeOf("/v1/messages/count_tokens"), ErrorShape::kAnthropic);
  EXPECT_EQ(ErrorShapeOf("/v1/messagesx"), ErrorShape::kOpenAi);
  const HttpReply reply =
      InPathErrorShape("/v1/messages", ErrorReply(absl::UnauthenticatedError("no key")));
  EXPECT_EQ(reply.status, 401u);
  EXPECT_EQ(reply.body,
            R"({"type":"error","error":{"type":"authentication_error","message":"no key"}})");
}

TEST(ErrorShapeTest, TheResponderReshapesSentAndDeferredErrors) {
  struct Recorder : Responder {
    void Send(HttpReply reply) override { sent.push_back(std::move(reply)); }
    void Defer(std::function<HttpReply()> make_reply) override { Send(make_reply()); }
    std::vector<HttpReply> sent;
  };
  auto recorder = std::make_shared<Recorder>();
  ResponderPtr openai = WithErrorShape(ErrorShape::kOpenAi, recorder);
  openai->Send(ErrorReply(absl::UnauthenticatedError("the API key is not valid")));
  openai->Defer([] { return ErrorReply(absl::NotFoundError("unknown model 'x'")); });
  HttpReply ok;
  ok.body = R"({"object":"list"})";
  openai->Send(ok);
  ASSERT_EQ(recorder->sent.size(), 3u);
  EXPECT_EQ(ErrorType(recorder->sent[0]), "authentication_error");
  EXPECT_EQ(ErrorType(recorder->sent[1]), "not_found_error");
  EXPECT_EQ(recorder->sent[2].body, ok.body);
  // The plain shape needs no wrapper.
  EXPECT_EQ(WithErrorShape(ErrorShape::kPlain, recorder), recorder);
}

}  // namespace
}  // namespace inferd

#include "frontends/http/handlers/logging_handler.h"

#include <string>

#include <gtest/gtest.h>

#include "observability/log_setup.h"

namespace inferd {
namespace {

HttpReply Post(std::string body) {
  HttpRequestView view;
  view.method = HttpMethod::kPost;
  view.body = &body;
  return HandleSetLogging(view);
}

TEST(LoggingHandlerTest, SetsTheGivenFieldsAndAnswersTheSettings) {
  ASSERT_TRUE(SetLogLevel("info").ok());
  HttpReply reply = Post(R"({"log_level": "debug", "access_log": false})");
  EXPECT_EQ(reply.status, 200u) << reply.body;
  EXPECT_NE(reply.body.find(R"("log_level":"debug")"), std::string::npos) << reply.body;
  EXPECT_NE(reply.body.find(R"("access_log":false)"), std::string::npos) << reply.body;
  EXPECT_EQ(CurrentLogLevel(), "debug");
  EXPECT_FALSE(AccessLogEnabled());
  SetAccessLogEnabled(true);
  ASSERT_TRUE(SetLogLevel("info").ok());
}

TEST(LoggingHandlerTest, ABadRequestChangesNothing) {
  ASSERT_TRUE(SetLogLevel("info").ok());
  for (const char* body :
       {R"({"log_level": "debug", "unknown": 1})", R"({"log_level": 3})",
        R"({"log_level": "debug", "log_format": "xml"})", "[1]", "{", R"({"log_level": "loud"})"}) {
    HttpReply reply = Post(body);
    EXPECT_EQ(reply.status, 400u) << body;
    EXPECT_EQ(CurrentLogLevel(), "info") << body;
  }
}

// Regression: the body went to RapidJSON's recursive parser, and a few million '[' crashed
// the process (stack overflow) before any check ran.
TEST(LoggingHandlerTest, DeeplyNestedBodyIsA400NotACrash) {
  ASSERT_TRUE(SetLogLevel("info").ok());
  EXPECT_EQ(Post(std::string(3'000'000, '[')).status, 400u);
  HttpReply reply = Post(std::string(1'000'000, '[') + std::string(1'000'000, ']'));
  EXPECT_EQ(reply.status, 400u);
  EXPECT_NE(reply.body.find("deeper than 64 levels"), std::string::npos)
      << reply.body.substr(0, 200);
  EXPECT_EQ(CurrentLogLevel(), "info");
}

}  // namespace
}  // namespace inferd

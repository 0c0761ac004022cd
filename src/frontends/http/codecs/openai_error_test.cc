#include "frontends/http/codecs/openai_error.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "common/client_paths.h"
#include "common/error_detail.h"

namespace inferd {
namespace {

// The body's "error" object, parsed.
rapidjson::Document ErrorObject(const HttpReply& reply) {
  rapidjson::Document document;
  document.Parse(reply.body.c_str());
  EXPECT_TRUE(document.IsObject() && document.HasMember("error")) << reply.body;
  rapidjson::Document error;
  error.CopyFrom(document["error"], error.GetAllocator());
  return error;
}

std::string Member(const rapidjson::Document& error, const char* name) {
  if (!error.HasMember(name) || error[name].IsNull()) return "null";
  return error[name].GetString();
}

TEST(OpenAiErrorTest, MapsEachRefusalToOpenAisTypeAndCode) {
  struct Case {
    absl::Status status;
    unsigned http_status;
    std::string type, code, param;
  };
  const Case cases[] = {
      {absl::UnauthenticatedError("the API key is not valid"), 401, "authentication_error",
       "invalid_api_key", "null"},
      {absl::PermissionDeniedError("needs the inference role"), 403, "permission_error", "null",
       "null"},
      {WithErrorReason(absl::NotFoundError("unknown model 'x'"), ErrorReason::kUnknownModel), 404,
       "not_found_error", "model_not_found", "null"},
      {absl::NotFoundError("unknown path"), 404, "not_found_error", "null", "null"},
      {WithErrorField(absl::InvalidArgumentError("'temperature' must be in [0, 2]"), "temperature"),
       400, "invalid_request_error", "null", "temperature"},
      {WithErrorReason(
           WithErrorField(absl::InvalidArgumentError("the prompt has 900 tokens"), "messages"),
           ErrorReason::kContextLengthExceeded),
       400, "invalid_request_error", "context_length_exceeded", "messages"},
      {absl::ResourceExhaustedError("tenant 'bob' is over its rate"), 429, "requests",
       "rate_limit_exceeded", "null"},
      {absl::UnavailableError("the model is shutting down"), 503, "server_error", "null", "null"},
      {absl::InternalError("boom"), 500, "server_error", "null", "null"},
      {absl::DeadlineExceededError("deadline"), 504, "server_error", "null", "null"},
  };
  for (const Case& c : cases) {
    const HttpReply reply = OpenAiErrorReply(c.status);
    EXPECT_EQ(reply.status, c.http_status) << c.status;
    const rapidjson::Document error = ErrorObject(reply);
    EXPECT_EQ(Member(error, "message"), std::string(c.status.message())) << c.status;
    EXPECT_EQ(Member(error, "type"), c.type) << c.status;
    EXPECT_EQ(Member(error, "code"), c.code) << c.status;
    EXPECT_EQ(Member(error, "param"), c.param) << c.status;
  }
}

TEST(OpenAiErrorTest, KeepsTheReplysStatusAndHeaders) {
  const HttpReply reply = OpenAiErrorReply(absl::ResourceExhaustedError("queue is full"));
  EXPECT_EQ(reply.status, 429u);
  EXPECT_EQ(reply.error.code(), absl::StatusCode::kResourceExhausted);
  bool retry_after = false;
  for (const auto& [name, value] : reply.headers) retry_after |= name == "Retry-After";
  EXPECT_TRUE(retry_after);
}

TEST(OpenAiErrorTest, TheMessageNamesNoServerFolder) {
  HideFolderFromClients("/tmp/openai-error-test-repository");
  const OpenAiError error = OpenAiErrorFor(
      500, absl::InternalError("/tmp/openai-error-test-repository/x/1/model.gguf: unreadable"));
  EXPECT_EQ(error.message, "x/1/model.gguf: unreadable");
}

}  // namespace
}  // namespace inferd

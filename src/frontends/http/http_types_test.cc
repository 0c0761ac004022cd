#include "frontends/http/http_types.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

TEST(HttpTypesTest, MapsStatusCodesToHttp) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOk), 200u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument), 400u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOutOfRange), 400u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kFailedPrecondition), 400u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kNotFound), 404u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted), 429u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnimplemented), 501u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable), 503u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDeadlineExceeded), 504u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInternal), 500u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnknown), 500u);
}

TEST(HttpTypesTest, ErrorReplyIsJsonWithEscapedMessage) {
  const HttpReply reply = ErrorReply(absl::NotFoundError("unknown model \"m\"\n"));
  EXPECT_EQ(reply.status, 404u);
  EXPECT_EQ(reply.body, R"({"error":"unknown model \"m\"\n"})");
  EXPECT_EQ(reply.content_type, "application/json");
  EXPECT_TRUE(reply.headers.empty());
}

TEST(HttpTypesTest, ErrorReplyWithExplicitStatus) {
  const HttpReply reply = ErrorReply(405, "this path takes GET");
  EXPECT_EQ(reply.status, 405u);
  EXPECT_EQ(reply.body, R"({"error":"this path takes GET"})");
}

TEST(HttpTypesTest, ResourceExhaustedReplyAsksToRetryAfterOneSecond) {
  const HttpReply reply = ErrorReply(absl::ResourceExhaustedError("the queue is full"));
  EXPECT_EQ(reply.status, 429u);
  EXPECT_EQ(reply.body, R"({"error":"the queue is full"})");
  ASSERT_EQ(reply.headers.size(), 1u);
  EXPECT_EQ(reply.headers[0].first, "Retry-After");
  EXPECT_EQ(reply.headers[0].second, "1");
  // Other errors do not.
  EXPECT_TRUE(ErrorReply(absl::DeadlineExceededError("late")).headers.empty());
  EXPECT_TRUE(ErrorReply(absl::UnavailableError("stopping")).headers.empty());
  EXPECT_TRUE(ErrorReply(429, "explicit").headers.empty());
}

TEST(HttpTypesTest, RequestHeaderLookupIgnoresCase) {
  std::string body;
  HttpRequestView view{HttpMethod::kPost,
                       "/predict",
                       "",
                       &body,
                       {{"Content-Type", "application/json"}, {"inference-timeout-us", "250"}}};
  EXPECT_EQ(view.Header("Inference-Timeout-Us"), "250");
  EXPECT_EQ(view.Header(kTimeoutHeader), "250");
  EXPECT_EQ(view.Header("content-type"), "application/json");
  EXPECT_EQ(view.Header("Accept"), "");
}

}  // namespace
}  // namespace inferd

#include "frontends/http/http_types.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

TEST(HttpTypesTest, ErrorReplyIsJsonWithEscapedMessage) {
  const HttpReply reply = ErrorReply(absl::NotFoundError("unknown model \"m\"\n"));
  EXPECT_EQ(reply.status, 404u);
  EXPECT_EQ(reply.body, R"({"error":"unknown model \"m\"\n"})");
  EXPECT_EQ(reply.content_type, "application/json");
  EXPECT_TRUE(reply.headers.empty());
  EXPECT_EQ(reply.error, absl::NotFoundError("unknown model \"m\"\n"));
}

// The session records the Status itself: FailedPrecondition stays FailedPrecondition (read
// back from the 400 it would be InvalidArgument).
TEST(HttpTypesTest, ErrorReplyKeepsTheStatusItReports) {
  EXPECT_EQ(ErrorReply(absl::FailedPreconditionError("not warm")).error,
            absl::FailedPreconditionError("not warm"));
  EXPECT_EQ(ErrorReply(413, "too large").error, absl::InvalidArgumentError("too large"));
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

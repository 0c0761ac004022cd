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

}  // namespace
}  // namespace inferd

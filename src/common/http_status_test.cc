#include "common/http_status.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(HttpStatusTest, MapsStatusCodesToHttp) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOk), 200u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument), 400u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOutOfRange), 400u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kFailedPrecondition), 400u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated), 401u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kPermissionDenied), 403u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kNotFound), 404u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kAborted), 409u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted), 429u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnimplemented), 501u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable), 503u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDeadlineExceeded), 504u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInternal), 500u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDataLoss), 500u);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnknown), 500u);
}

// Every HTTP status HttpStatusFor produces stands for a code that maps to it again.
TEST(HttpStatusTest, HttpStatusesMapBackToACodeWithTheSameStatus) {
  for (int raw = 0; raw <= static_cast<int>(absl::StatusCode::kUnauthenticated); ++raw) {
    const auto code = static_cast<absl::StatusCode>(raw);
    const unsigned http = HttpStatusFor(code);
    EXPECT_EQ(HttpStatusFor(StatusCodeForHttp(http)), http) << absl::StatusCodeToString(code);
  }
  EXPECT_EQ(StatusCodeForHttp(413), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeForHttp(405), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeForHttp(502), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace inferd

#include "common/error_detail.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(ErrorDetailTest, CarriesTheFieldAndReasonWithTheStatus) {
  absl::Status status =
      WithErrorReason(WithErrorField(absl::InvalidArgumentError("too long"), "messages"),
                      ErrorReason::kContextLengthExceeded);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "too long");
  EXPECT_EQ(ErrorField(status), "messages");
  EXPECT_EQ(ErrorReasonOf(status), ErrorReason::kContextLengthExceeded);
  // A copy (as every layer that forwards a Status makes) keeps them.
  const absl::Status copy = status;
  EXPECT_EQ(ErrorField(copy), "messages");
}

TEST(ErrorDetailTest, AStatusWithoutDetailsHasNone) {
  const absl::Status status = absl::NotFoundError("unknown model 'x'");
  EXPECT_EQ(ErrorField(status), "");
  EXPECT_EQ(ErrorReasonOf(status), ErrorReason::kNone);
}

TEST(ErrorDetailTest, AnOkStatusStaysOk) {
  EXPECT_TRUE(WithErrorField(absl::OkStatus(), "model").ok());
  EXPECT_TRUE(WithErrorReason(absl::OkStatus(), ErrorReason::kUnknownModel).ok());
  EXPECT_EQ(ErrorReasonOf(WithErrorReason(absl::OkStatus(), ErrorReason::kUnknownModel)),
            ErrorReason::kNone);
}

}  // namespace
}  // namespace inferd

#include "observability/request_outcome.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(RequestOutcomeTest, ClassifiesStatusCodes) {
  EXPECT_EQ(OutcomeForStatus(absl::StatusCode::kOk), RequestOutcome::kSuccess);
  EXPECT_EQ(OutcomeForStatus(absl::StatusCode::kInvalidArgument), RequestOutcome::kBadInput);
  EXPECT_EQ(OutcomeForStatus(absl::StatusCode::kNotFound), RequestOutcome::kBadInput);
  EXPECT_EQ(OutcomeForStatus(absl::StatusCode::kResourceExhausted), RequestOutcome::kRejected);
  EXPECT_EQ(OutcomeForStatus(absl::StatusCode::kUnavailable), RequestOutcome::kRejected);
  EXPECT_EQ(OutcomeForStatus(absl::StatusCode::kDeadlineExceeded), RequestOutcome::kTimeout);
  EXPECT_EQ(OutcomeForStatus(absl::StatusCode::kInternal), RequestOutcome::kBackendError);
}

TEST(RequestOutcomeTest, NamesAreLabelValues) {
  EXPECT_EQ(OutcomeName(RequestOutcome::kBadInput), "bad_input");
  EXPECT_EQ(OutcomeName(RequestOutcome::kBackendError), "backend_error");
}

}  // namespace
}  // namespace inferd

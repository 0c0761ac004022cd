#include "observability/recent_errors.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(RecentErrorsTest, KeepsTheNewestUpToCapacityNewestFirst) {
  RecentErrors errors(3);
  for (int i = 0; i < 5; ++i) {
    RecentError error;
    error.time_ms = i;
    error.message = std::to_string(i);
    errors.Add(std::move(error));
  }
  std::vector<RecentError> kept = errors.Snapshot();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].message, "4");
  EXPECT_EQ(kept[2].message, "2");
}

}  // namespace
}  // namespace inferd

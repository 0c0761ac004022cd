#include "core/memory/eviction.h"

#include <chrono>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

EvictionCandidate Candidate(std::string name, uint64_t bytes, int last_used_s, bool pinned = false,
                            bool busy = false) {
  EvictionCandidate candidate;
  candidate.key = VersionKey{std::move(name), 1};
  candidate.bytes = bytes;
  candidate.last_used = TimePoint() + std::chrono::seconds(last_used_s);
  candidate.pinned = pinned;
  candidate.busy = busy;
  return candidate;
}

TEST(EvictionTest, NothingWhenTheLoadFits) {
  auto chosen = ChooseEvictions({Candidate("a", 10, 1)}, 10, 5, 20);
  ASSERT_TRUE(chosen.ok());
  EXPECT_THAT(*chosen, IsEmpty());
}

TEST(EvictionTest, EvictsLeastRecentlyUsedFirstAndOnlyAsManyAsNeeded) {
  auto chosen = ChooseEvictions(
      {Candidate("new", 10, 30), Candidate("old", 10, 10), Candidate("mid", 10, 20)}, 30, 15, 30);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_THAT(*chosen, ElementsAre(VersionKey{"old", 1}, VersionKey{"mid", 1}));
}

TEST(EvictionTest, SkipsPinnedAndBusyModels) {
  auto chosen =
      ChooseEvictions({Candidate("pinned", 10, 1, /*pinned=*/true),
                       Candidate("busy", 10, 2, false, /*busy=*/true), Candidate("idle", 10, 3)},
                      30, 10, 30);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_THAT(*chosen, ElementsAre(VersionKey{"idle", 1}));
}

TEST(EvictionTest, FailsWithTheReasonWhenNothingCanBeEvicted) {
  auto chosen = ChooseEvictions(
      {Candidate("pinned", 10, 1, true), Candidate("busy", 10, 2, false, true)}, 20, 10, 20);
  ASSERT_EQ(chosen.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(chosen.status().message()), HasSubstr("pinned models hold 10 B"));
  EXPECT_THAT(std::string(chosen.status().message()), HasSubstr("in flight hold 10 B"));
}

TEST(EvictionTest, FailsWhenTheModelIsLargerThanTheWholeBudget) {
  auto chosen = ChooseEvictions({}, 0, 50, 20);
  EXPECT_THAT(std::string(chosen.status().message()), HasSubstr("more than the whole budget"));
}

}  // namespace
}  // namespace inferd

#include "backends/llama/slot_choice.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(SlotChoiceTest, PicksTheLongestCachedPrefix) {
  const std::vector<int32_t> a = {1, 2, 9}, b = {1, 2, 3, 4}, prompt = {1, 2, 3, 4, 5};
  const std::vector<SlotCandidate> slots = {{a, 5}, {b, 1}};
  EXPECT_EQ(ChooseSlot(slots, prompt), 1u);
}

TEST(SlotChoiceTest, AmongEqualPrefixesPicksTheLeastRecentlyUsed) {
  const std::vector<int32_t> a = {7}, b = {8}, prompt = {1, 2};
  const std::vector<SlotCandidate> slots = {{a, 5}, {b, 2}, {{}, 3}};
  EXPECT_EQ(ChooseSlot(slots, prompt), 1u);
}

TEST(SlotChoiceTest, ReusesAllButTheLastPromptToken) {
  const std::vector<int32_t> cached = {1, 2, 3, 4}, prompt = {1, 2, 3};
  EXPECT_EQ(ReusablePrefix(cached, prompt), 2u);
  EXPECT_EQ(ReusablePrefix(cached, std::vector<int32_t>{1, 2, 5, 6}), 2u);
  EXPECT_EQ(ReusablePrefix({}, prompt), 0u);
}

}  // namespace
}  // namespace inferd

#include "backends/llama/sequence_queue.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd {
namespace {

using ::testing::HasSubstr;

// The prepared choices of a request of `n` choices with `prompt` and `partition`.
std::vector<QueuedChoice> Prepared(int n, std::vector<int32_t> prompt, std::string partition = "",
                                   std::shared_ptr<GenerateRequest>* out = nullptr) {
  auto request = std::make_shared<GenerateRequest>();
  request->n = n;
  request->cache_partition = std::move(partition);
  if (out != nullptr) *out = request;
  auto tokens = std::make_shared<const std::vector<int32_t>>(std::move(prompt));
  std::vector<QueuedChoice> choices;
  for (int i = 0; i < n; ++i) choices.push_back({request, tokens, i, 16, nullptr, nullptr});
  return choices;
}

TEST(SequenceQueueTest, CountsSequencesNotRequestsAgainstMaxQueue) {
  SequenceQueue queue(/*max_sequences=*/4, /*parallel=*/2);
  ASSERT_TRUE(queue.Reserve(3).ok());
  const absl::Status full = queue.Reserve(2);
  EXPECT_TRUE(absl::IsResourceExhausted(full));
  EXPECT_THAT(std::string(full.message()),
              HasSubstr("3 sequences wait for one of 2 (parameters.max_queue 4)"));
  EXPECT_TRUE(queue.Reserve(1).ok());
  EXPECT_EQ(queue.waiting(), 4);
  // A prepared request's reservation becomes its queued choices; a refused one's is freed.
  queue.Release(3, Prepared(3, {1, 2}));
  queue.Release(1);
  EXPECT_EQ(queue.waiting(), 3);
  EXPECT_TRUE(queue.Reserve(1).ok());
}

TEST(SequenceQueueTest, StartsChoicesInOrderWhileSlotsLast) {
  SequenceQueue queue(16, 2);
  ASSERT_TRUE(queue.Reserve(3).ok());
  queue.Release(3, Prepared(3, {5, 6, 7}));
  const auto admitted = queue.Admit({{0, {}, "", 0}, {1, {}, "", 0}});
  ASSERT_EQ(admitted.size(), 2u);
  EXPECT_EQ(admitted[0].second.choice, 0);
  EXPECT_EQ(admitted[1].second.choice, 1);
  EXPECT_NE(admitted[0].first, admitted[1].first);
  EXPECT_EQ(queue.waiting(), 1);
  EXPECT_EQ(queue.Admit({{1, {}, "", 0}}).front().second.choice, 2);
  EXPECT_TRUE(queue.empty());
}

TEST(SequenceQueueTest, ReusesACachedPrefixOnlyWithinItsPartition) {
  const std::vector<int32_t> cached = {1, 2, 3, 4};
  const std::vector<FreeSlot> slots = {{0, {}, "", 5}, {1, cached, "red", 9}};
  SequenceQueue queue(16, 2);
  // Another tenant's request does not get red's cache, however well it matches: it takes the
  // least recently used slot, as if slot 1 were empty.
  queue.Release(0, Prepared(1, {1, 2, 3, 4, 5}, "blue"));
  auto admitted = queue.Admit(slots);
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].first, 0u);
  // red's own request does.
  queue.Release(0, Prepared(1, {1, 2, 3, 4, 5}, "red"));
  admitted = queue.Admit(slots);
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].first, 1u);
}

TEST(SequenceQueueTest, DropsCancelledAndExpiredChoicesBeforeTheyStart) {
  SequenceQueue queue(16, 1);
  std::shared_ptr<GenerateRequest> gone, late, waiting;
  queue.Release(0, Prepared(2, {1}, "", &gone));
  queue.Release(0, Prepared(1, {1}, "", &late));
  queue.Release(0, Prepared(1, {1}, "", &waiting));
  const TimePoint now = TimePoint() + std::chrono::seconds(100);
  gone->cancelled->store(true);
  late->deadline = now - std::chrono::milliseconds(1);
  waiting->deadline = now + std::chrono::seconds(1);
  const auto dropped = queue.DropFinished(now);
  ASSERT_EQ(dropped.size(), 3u);
  EXPECT_TRUE(absl::IsCancelled(dropped[0].second));
  EXPECT_EQ(dropped[1].first.choice, 1);  // every choice of the cancelled request
  EXPECT_TRUE(absl::IsDeadlineExceeded(dropped[2].second));
  EXPECT_THAT(std::string(dropped[2].second.message()), HasSubstr("waited for a free sequence"));
  EXPECT_EQ(queue.waiting(), 1);
  EXPECT_EQ(queue.TakeAll().front().request, waiting);
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace inferd

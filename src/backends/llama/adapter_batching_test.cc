#include "backends/llama/adapter_batching.h"

#include <map>
#include <vector>

#include <gtest/gtest.h>

namespace inferd {
namespace {

const AdapterSet kBase = {};
const AdapterSet kTone = {{0, 1.0f}};
const AdapterSet kToneHalf = {{0, 0.5f}};
const AdapterSet kBoth = {{0, 1.0f}, {1, 1.0f}};

TEST(AdapterBatchingTest, OneSetReadyIsServedEveryStep) {
  const std::vector<const AdapterSet*> ready = {&kTone, &kTone};
  EXPECT_EQ(NextAdapterSet(ready, kTone), kTone);
  EXPECT_EQ(NextAdapterSet(ready, kBase), kTone);
  const std::vector<const AdapterSet*> base = {&kBase};
  EXPECT_EQ(NextAdapterSet(base, kBase), kBase);
}

TEST(AdapterBatchingTest, BaseAndAdapterStreamsAlternate) {
  // Three base sequences and one adapter sequence: the adapter does not wait for the base
  // ones, and the base ones do not wait for it more than one step.
  const std::vector<const AdapterSet*> ready = {&kBase, &kTone, &kBase, &kBase};
  AdapterSet last = kBase;
  std::vector<AdapterSet> served;
  for (int step = 0; step < 4; ++step) {
    last = NextAdapterSet(ready, last);
    served.push_back(last);
  }
  EXPECT_EQ(served, (std::vector<AdapterSet>{kTone, kBase, kTone, kBase}));
}

TEST(AdapterBatchingTest, EverySetGetsOneStepPerRound) {
  const std::vector<const AdapterSet*> ready = {&kBoth, &kToneHalf, &kBase, &kTone, &kTone};
  std::map<AdapterSet, int> steps;
  AdapterSet last = kBase;
  for (int step = 0; step < 40; ++step) {
    last = NextAdapterSet(ready, last);
    ++steps[last];
  }
  ASSERT_EQ(steps.size(), 4u);
  for (const auto& [set, count] : steps) EXPECT_EQ(count, 10);
}

TEST(AdapterBatchingTest, ScalesAreDifferentSets) {
  // Equal adapters at different scales cannot share a step: the context has one scale each.
  EXPECT_NE(kTone, kToneHalf);
  const std::vector<const AdapterSet*> ready = {&kTone, &kToneHalf};
  EXPECT_EQ(NextAdapterSet(ready, kToneHalf), kTone);
  EXPECT_EQ(NextAdapterSet(ready, kTone), kToneHalf);
}

TEST(AdapterBatchingTest, ASetThatLeftIsSkipped) {
  // The last set served has no sequence ready any more: the next one after it in order.
  const std::vector<const AdapterSet*> ready = {&kBase, &kBoth};
  EXPECT_EQ(NextAdapterSet(ready, kTone), kBoth);
  EXPECT_EQ(NextAdapterSet(ready, kBoth), kBase);
}

}  // namespace
}  // namespace inferd
